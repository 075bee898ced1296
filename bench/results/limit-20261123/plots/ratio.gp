set terminal pngcairo size 640,420 enhanced font "Sans,9"
set output "ratio.png"
set title "Ratio to the native C baseline, 1e6 rows, reference configuration (1 = as fast as C)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set grid ytics
set yrange [0:*]
set ylabel "x native"
set key top right
set datafile missing "?"
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb "gray"
$ratio << EOD
"select" 0.769681 0.639398 1.020149
EOD
plot $ratio using 2:xtic(1) title "MicrosoftData" lc rgb "#1f77b4", '' using 3 title "SystemData" lc rgb "#ff7f0e", '' using 4 title "PInvoke" lc rgb "#2ca02c"
