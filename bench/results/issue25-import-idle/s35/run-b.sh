#!/bin/sh
rm -f /tmp/s35-import/fb-b.db /tmp/s35-import/fb-b.db-wal /tmp/s35-import/fb-b.db-shm /tmp/s35-import/fb-b.db-blockdb-keymap
exec dotnet /tmp/s35b/BlockDb.Stress.dll import PInvoke /tmp/s35-import/fb-b.db "$1" 100000 >> /tmp/s35-import/fb-b-$1.out 2>&1
