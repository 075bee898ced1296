#!/bin/sh
W=/tmp/i25s29/fb
rm -f $W/c.db $W/c.db-wal $W/c.db-shm; cp /tmp/i25s29/empty.db $W/c.db
exec /tmp/i25s29/import-loop $W/c.db "$1" 100000 >> $W/c-$1.out 2>&1
