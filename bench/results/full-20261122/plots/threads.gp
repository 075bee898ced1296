set terminal pngcairo size 1560,750 enhanced font "Sans,9"
set output "threads.png"
set datafile missing "?"
set grid ytics
set key below horizontal font ",7" samplen 2
set multiplot layout 2,3 title "Threads study: k ops/s (median of 4)"
$Threads_select << EOD
1 "1" 185.010284 201.701002 233.911098 239.203022 185.010284 201.701002 233.911098 239.203022
2 "2" 216.163168 285.915235 308.292854 333.120011 138.485002 164.051384 194.697629 191.442731
4 "4" 214.644837 334.707434 303.521246 270.129115 157.563371 170.834109 199.681914 199.496422
EOD
set title "select"
set ylabel "k ops/s"
set yrange [0:*]
unset logscale x
set xlabel "threads"
plot $Threads_select using 1:3:xtic(2) with linespoints title "MicrosoftData per-thread" lc rgb "#1f77b4" dt 1 pt 7, $Threads_select using 1:4:xtic(2) with linespoints title "SystemData per-thread" lc rgb "#ff7f0e" dt 1 pt 8, $Threads_select using 1:5:xtic(2) with linespoints title "PInvoke per-thread" lc rgb "#2ca02c" dt 1 pt 9, $Threads_select using 1:6:xtic(2) with linespoints title "Native per-thread" lc rgb "#000000" dt 1 pt 10, $Threads_select using 1:7:xtic(2) with linespoints title "MicrosoftData shared" lc rgb "#1f77b4" dt 2 pt 11, $Threads_select using 1:8:xtic(2) with linespoints title "SystemData shared" lc rgb "#ff7f0e" dt 2 pt 12, $Threads_select using 1:9:xtic(2) with linespoints title "PInvoke shared" lc rgb "#2ca02c" dt 2 pt 7, $Threads_select using 1:10:xtic(2) with linespoints title "Native shared" lc rgb "#000000" dt 2 pt 8
$Threads_insert << EOD
1 "1" 29.994929 30.244682 31.322649 31.100534 29.994929 30.244682 31.322649 31.100534
2 "2" 45.761689 46.878027 48.484656 51.050899 26.574296 26.164596 26.776446 28.864641
4 "4" 37.875689 41.028292 47.384602 47.80362 29.457096 28.849806 31.065389 30.40113
EOD
set title "insert"
set ylabel "k ops/s"
set yrange [0:*]
unset logscale x
set xlabel "threads"
plot $Threads_insert using 1:3:xtic(2) with linespoints title "MicrosoftData per-thread" lc rgb "#1f77b4" dt 1 pt 7, $Threads_insert using 1:4:xtic(2) with linespoints title "SystemData per-thread" lc rgb "#ff7f0e" dt 1 pt 8, $Threads_insert using 1:5:xtic(2) with linespoints title "PInvoke per-thread" lc rgb "#2ca02c" dt 1 pt 9, $Threads_insert using 1:6:xtic(2) with linespoints title "Native per-thread" lc rgb "#000000" dt 1 pt 10, $Threads_insert using 1:7:xtic(2) with linespoints title "MicrosoftData shared" lc rgb "#1f77b4" dt 2 pt 11, $Threads_insert using 1:8:xtic(2) with linespoints title "SystemData shared" lc rgb "#ff7f0e" dt 2 pt 12, $Threads_insert using 1:9:xtic(2) with linespoints title "PInvoke shared" lc rgb "#2ca02c" dt 2 pt 7, $Threads_insert using 1:10:xtic(2) with linespoints title "Native shared" lc rgb "#000000" dt 2 pt 8
$Threads_xor_select_insert << EOD
1 "1" 31.60206 32.005177 31.129884 32.266144 31.60206 32.005177 31.129884 32.266144
2 "2" 48.757013 50.682211 49.857454 50.445664 29.01229 29.498169 30.589132 30.907732
4 "4" 44.527371 46.27838 49.971151 54.400919 33.643889 35.821577 37.27025 33.556989
EOD
set title "xor-select-insert"
set ylabel "k ops/s"
set yrange [0:*]
unset logscale x
set xlabel "threads"
plot $Threads_xor_select_insert using 1:3:xtic(2) with linespoints title "MicrosoftData per-thread" lc rgb "#1f77b4" dt 1 pt 7, $Threads_xor_select_insert using 1:4:xtic(2) with linespoints title "SystemData per-thread" lc rgb "#ff7f0e" dt 1 pt 8, $Threads_xor_select_insert using 1:5:xtic(2) with linespoints title "PInvoke per-thread" lc rgb "#2ca02c" dt 1 pt 9, $Threads_xor_select_insert using 1:6:xtic(2) with linespoints title "Native per-thread" lc rgb "#000000" dt 1 pt 10, $Threads_xor_select_insert using 1:7:xtic(2) with linespoints title "MicrosoftData shared" lc rgb "#1f77b4" dt 2 pt 11, $Threads_xor_select_insert using 1:8:xtic(2) with linespoints title "SystemData shared" lc rgb "#ff7f0e" dt 2 pt 12, $Threads_xor_select_insert using 1:9:xtic(2) with linespoints title "PInvoke shared" lc rgb "#2ca02c" dt 2 pt 7, $Threads_xor_select_insert using 1:10:xtic(2) with linespoints title "Native shared" lc rgb "#000000" dt 2 pt 8
$Threads_join << EOD
1 "1" 91.508713 99.040012 130.81301 146.744227 91.508713 99.040012 130.81301 146.744227
2 "2" 138.259401 178.926084 215.505436 255.820478 77.106871 76.626559 106.130825 122.616935
4 "4" 124.834943 163.370443 187.299096 168.419414 81.130345 83.511013 112.750705 111.815933
EOD
set title "join"
set ylabel "k ops/s"
set yrange [0:*]
unset logscale x
set xlabel "threads"
plot $Threads_join using 1:3:xtic(2) with linespoints title "MicrosoftData per-thread" lc rgb "#1f77b4" dt 1 pt 7, $Threads_join using 1:4:xtic(2) with linespoints title "SystemData per-thread" lc rgb "#ff7f0e" dt 1 pt 8, $Threads_join using 1:5:xtic(2) with linespoints title "PInvoke per-thread" lc rgb "#2ca02c" dt 1 pt 9, $Threads_join using 1:6:xtic(2) with linespoints title "Native per-thread" lc rgb "#000000" dt 1 pt 10, $Threads_join using 1:7:xtic(2) with linespoints title "MicrosoftData shared" lc rgb "#1f77b4" dt 2 pt 11, $Threads_join using 1:8:xtic(2) with linespoints title "SystemData shared" lc rgb "#ff7f0e" dt 2 pt 12, $Threads_join using 1:9:xtic(2) with linespoints title "PInvoke shared" lc rgb "#2ca02c" dt 2 pt 7, $Threads_join using 1:10:xtic(2) with linespoints title "Native shared" lc rgb "#000000" dt 2 pt 8
$Threads_new_blockset << EOD
1 "1" 1.357442 1.302575 1.563089 1.472363 1.357442 1.302575 1.563089 1.472363
2 "2" 2.231324 2.42375 2.389419 2.467173 1.397389 1.374504 1.53158 1.461133
4 "4" 2.00779 1.958855 2.182612 2.661262 1.486985 1.499289 1.567179 1.580244
EOD
set title "new-blockset"
set ylabel "k ops/s"
set yrange [0:*]
unset logscale x
set xlabel "threads"
plot $Threads_new_blockset using 1:3:xtic(2) with linespoints title "MicrosoftData per-thread" lc rgb "#1f77b4" dt 1 pt 7, $Threads_new_blockset using 1:4:xtic(2) with linespoints title "SystemData per-thread" lc rgb "#ff7f0e" dt 1 pt 8, $Threads_new_blockset using 1:5:xtic(2) with linespoints title "PInvoke per-thread" lc rgb "#2ca02c" dt 1 pt 9, $Threads_new_blockset using 1:6:xtic(2) with linespoints title "Native per-thread" lc rgb "#000000" dt 1 pt 10, $Threads_new_blockset using 1:7:xtic(2) with linespoints title "MicrosoftData shared" lc rgb "#1f77b4" dt 2 pt 11, $Threads_new_blockset using 1:8:xtic(2) with linespoints title "SystemData shared" lc rgb "#ff7f0e" dt 2 pt 12, $Threads_new_blockset using 1:9:xtic(2) with linespoints title "PInvoke shared" lc rgb "#2ca02c" dt 2 pt 7, $Threads_new_blockset using 1:10:xtic(2) with linespoints title "Native shared" lc rgb "#000000" dt 2 pt 8
unset multiplot
