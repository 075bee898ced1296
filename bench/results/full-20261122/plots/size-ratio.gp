set terminal pngcairo size 1560,1110 enhanced font "Sans,9"
set output "size-ratio.png"
set datafile missing "?"
set grid ytics
set key below horizontal font ",7" samplen 2
set multiplot layout 3,3 title "Ratio to the native C baseline against DB size (1 = as fast as C)"
$ratio_select << EOD
10000 "1e4" 0.785455 0.843364 0.969973
100000 "1e5" 0.735707 0.777138 0.9166
1000000 "1e6" 0.773445 0.843221 0.977877
10000000 "1e7" 1.168938 1.260513 1.351627
EOD
set title "select"
set ylabel "x native"
set yrange [0:*]
set logscale x 10
set xlabel "pre-filled blocks"
plot $ratio_select using 1:3:xtic(2) with linespoints title "MicrosoftData" lc rgb "#1f77b4" pt 7, $ratio_select using 1:4:xtic(2) with linespoints title "SystemData" lc rgb "#ff7f0e" pt 8, $ratio_select using 1:5:xtic(2) with linespoints title "PInvoke" lc rgb "#2ca02c" pt 9, 1 with lines dt 2 lc rgb "gray" notitle
$ratio_insert << EOD
10000 "1e4" 0.781283 0.839317 0.957757
100000 "1e5" 0.806131 0.820704 0.929587
1000000 "1e6" 0.912969 0.961697 0.989746
EOD
set title "insert"
set ylabel "x native"
set yrange [0:*]
set logscale x 10
set xlabel "pre-filled blocks"
plot $ratio_insert using 1:3:xtic(2) with linespoints title "MicrosoftData" lc rgb "#1f77b4" pt 7, $ratio_insert using 1:4:xtic(2) with linespoints title "SystemData" lc rgb "#ff7f0e" pt 8, $ratio_insert using 1:5:xtic(2) with linespoints title "PInvoke" lc rgb "#2ca02c" pt 9, 1 with lines dt 2 lc rgb "gray" notitle
$ratio_xor_select_insert << EOD
10000 "1e4" 0.720569 0.785467 0.877275
100000 "1e5" 0.754696 0.775082 0.939997
1000000 "1e6" 0.886793 0.91295 0.961022
10000000 "1e7" 1.147262 1.181141 1.231928
EOD
set title "xor-select-insert"
set ylabel "x native"
set yrange [0:*]
set logscale x 10
set xlabel "pre-filled blocks"
plot $ratio_xor_select_insert using 1:3:xtic(2) with linespoints title "MicrosoftData" lc rgb "#1f77b4" pt 7, $ratio_xor_select_insert using 1:4:xtic(2) with linespoints title "SystemData" lc rgb "#ff7f0e" pt 8, $ratio_xor_select_insert using 1:5:xtic(2) with linespoints title "PInvoke" lc rgb "#2ca02c" pt 9, 1 with lines dt 2 lc rgb "gray" notitle
$ratio_xor_ignore_select << EOD
10000 "1e4" 0.595821 0.664148 0.922521
100000 "1e5" 0.656514 0.731661 0.91367
1000000 "1e6" 0.907139 0.917356 0.964656
EOD
set title "xor-ignore-select"
set ylabel "x native"
set yrange [0:*]
set logscale x 10
set xlabel "pre-filled blocks"
plot $ratio_xor_ignore_select using 1:3:xtic(2) with linespoints title "MicrosoftData" lc rgb "#1f77b4" pt 7, $ratio_xor_ignore_select using 1:4:xtic(2) with linespoints title "SystemData" lc rgb "#ff7f0e" pt 8, $ratio_xor_ignore_select using 1:5:xtic(2) with linespoints title "PInvoke" lc rgb "#2ca02c" pt 9, 1 with lines dt 2 lc rgb "gray" notitle
$ratio_xor_returning << EOD
10000 "1e4" 0.752527 0.815366 0.923324
100000 "1e5" 0.760651 0.821458 0.927768
1000000 "1e6" 0.940633 0.939502 0.969708
EOD
set title "xor-returning"
set ylabel "x native"
set yrange [0:*]
set logscale x 10
set xlabel "pre-filled blocks"
plot $ratio_xor_returning using 1:3:xtic(2) with linespoints title "MicrosoftData" lc rgb "#1f77b4" pt 7, $ratio_xor_returning using 1:4:xtic(2) with linespoints title "SystemData" lc rgb "#ff7f0e" pt 8, $ratio_xor_returning using 1:5:xtic(2) with linespoints title "PInvoke" lc rgb "#2ca02c" pt 9, 1 with lines dt 2 lc rgb "gray" notitle
$ratio_join << EOD
10000 "1e4" 0.554093 0.614905 0.865662
100000 "1e5" 0.530781 0.59497 0.818282
1000000 "1e6" 0.623593 0.674916 0.891435
EOD
set title "join"
set ylabel "x native"
set yrange [0:*]
set logscale x 10
set xlabel "pre-filled blocks"
plot $ratio_join using 1:3:xtic(2) with linespoints title "MicrosoftData" lc rgb "#1f77b4" pt 7, $ratio_join using 1:4:xtic(2) with linespoints title "SystemData" lc rgb "#ff7f0e" pt 8, $ratio_join using 1:5:xtic(2) with linespoints title "PInvoke" lc rgb "#2ca02c" pt 9, 1 with lines dt 2 lc rgb "gray" notitle
$ratio_new_blockset << EOD
10000 "1e4" 0.596166 0.687234 0.955905
100000 "1e5" 0.646802 0.751143 0.968703
1000000 "1e6" 0.869324 0.880873 0.970239
EOD
set title "new-blockset"
set ylabel "x native"
set yrange [0:*]
set logscale x 10
set xlabel "pre-filled blocks"
plot $ratio_new_blockset using 1:3:xtic(2) with linespoints title "MicrosoftData" lc rgb "#1f77b4" pt 7, $ratio_new_blockset using 1:4:xtic(2) with linespoints title "SystemData" lc rgb "#ff7f0e" pt 8, $ratio_new_blockset using 1:5:xtic(2) with linespoints title "PInvoke" lc rgb "#2ca02c" pt 9, 1 with lines dt 2 lc rgb "gray" notitle
unset multiplot
