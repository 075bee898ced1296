#!/bin/sh
rm -f /tmp/lim/fb-c.db /tmp/lim/fb-c.db-wal /tmp/lim/fb-c.db-shm; cp /tmp/lim/empty.db /tmp/lim/fb-c.db
exec /tmp/lim/import_loop /tmp/lim/fb-c.db "$1" 100000 >> /tmp/lim/fb-c-$1.out 2>&1
