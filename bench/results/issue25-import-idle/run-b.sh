#!/bin/sh
rm -f /tmp/lim/fb-b.db /tmp/lim/fb-b.db-wal /tmp/lim/fb-b.db-shm /tmp/lim/fb-b.db-blockdb-keymap
exec dotnet /tmp/lim/build/BlockDb.Stress.dll import PInvoke /tmp/lim/fb-b.db "$1" 100000 >> /tmp/lim/fb-b-$1.out 2>&1
