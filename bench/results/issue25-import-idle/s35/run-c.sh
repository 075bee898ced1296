#!/bin/sh
rm -f /tmp/s35-import/fb-c.db /tmp/s35-import/fb-c.db-wal /tmp/s35-import/fb-c.db-shm; cp /tmp/s35-import/empty.db /tmp/s35-import/fb-c.db
exec /tmp/s35-import-loop /tmp/s35-import/fb-c.db "$1" 100000 >> /tmp/s35-import/fb-c-$1.out 2>&1
