set terminal pngcairo size 1000,420 font ',10'
set output 'scale1e8.png'
set multiplot layout 1,2 title 'KeyMap at 1e8 blocks vs 1e5 (BlockDb.MapLoad once; medians; loaded 2-core machine)'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set key top left
set ylabel 'µs per op (lower is better)'
set yrange [0:*]
set title 'per op: select and select-xor-insert'
plot 'scale1e8.dat' using 2:xtic(1) title 'select 1e5', '' using 3 title 'select 1e8', '' using 4 title 'xor 1e5', '' using 5 title 'xor 1e8'
set title 'open + first lookup at 1e8 (target < 10 s)'
set ylabel 'seconds'
unset key
set arrow from graph 0, first 10 to graph 1, first 10 nohead lw 2 dt 2 lc rgb 'red'
plot 'scale1e8.dat' using 6:xtic(1) title 'first lookup'
unset multiplot
