#!/usr/bin/env bash
# B/call without valgrind: the same `ops` lines, 22,000 calls each, on a copy of the 1e5 KeyMap file.
# before = fd51094 (branch point); after2 = ff87527; after3 = the direct per-row calls (RawNative). SystemData is unchanged.
for build in before after2 after3; do for p in MicrosoftData SystemData; do for op in find find-text sxi sxi-text; do
  [ $build != before ] && [ $p = SystemData ] && continue
  w=/tmp/adonet-alloc/run.db; rm -f $w $w-*; cp /tmp/cg-adonet/filled-100000.db $w; cp /tmp/cg-adonet/filled-100000.db-blockdb-keymap $w-blockdb-keymap
  echo "$build $(DOTNET_TieredCompilation=0 dotnet /tmp/adonet-$build-bin/BlockDb.Stress.dll ops $p $w 100000 $op 22000)"
done; done; done
