#!/usr/bin/env bash
for build in before after; do for p in PInvoke MicrosoftData SystemData; do for op in find find-text sxi sxi-text; do
  [ $build = after ] && [ $p != PInvoke ] && continue
  w=/tmp/hp-alloc/run.db; rm -f $w $w-*; cp /tmp/cg-hotpath/filled-100000.db $w; cp /tmp/cg-hotpath/filled-100000.db-blockdb-keymap $w-blockdb-keymap
  echo "$build $(DOTNET_TieredCompilation=0 dotnet /tmp/hp-$build/BlockDb.Stress.dll ops $p $w 100000 $op 22000)"
done; done; done
