#!/bin/sh
# run-b.sh BUILD N : BlockDb import of N rows into a new KeyMap file (100,000 per transaction)
W=/tmp/i25s29/fb
rm -f $W/b.db $W/b.db-wal $W/b.db-shm $W/b.db-blockdb-keymap
exec dotnet /tmp/i25s29/$1/BlockDb.Stress.dll import PInvoke $W/b.db "$2" 100000 >> $W/b-$1-$2.out 2>&1
