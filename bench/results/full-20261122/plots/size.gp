set terminal pngcairo size 1560,1110 enhanced font "Sans,9"
set output "size.png"
set datafile missing "?"
set grid ytics
set key below horizontal font ",7" samplen 2
set multiplot layout 3,3 title "Size study: k ops/s (median of 4)"
$Size_select << EOD
10000 "1e4" 254.950313 273.746876 314.842923 324.589414
100000 "1e5" 232.550847 245.64704 289.729759 316.091837
1000000 "1e6" 185.010284 201.701002 233.911098 239.203022
10000000 "1e7" 123.261448 132.917755 142.525531 105.447367
EOD
set title "select"
set ylabel "k ops/s"
set yrange [0:*]
set logscale x 10
set xlabel "pre-filled blocks"
plot $Size_select using 1:3:xtic(2) with linespoints title "MicrosoftData" lc rgb "#1f77b4" dt 1 pt 7, $Size_select using 1:4:xtic(2) with linespoints title "SystemData" lc rgb "#ff7f0e" dt 1 pt 8, $Size_select using 1:5:xtic(2) with linespoints title "PInvoke" lc rgb "#2ca02c" dt 1 pt 9, $Size_select using 1:6:xtic(2) with linespoints title "Native" lc rgb "#000000" dt 1 pt 10
$Size_insert << EOD
10000 "1e4" 212.770295 228.574922 260.830088 272.334408
100000 "1e5" 165.333116 168.321854 190.653123 205.094486
1000000 "1e6" 60.64888 63.885945 65.749232 66.430408
EOD
set title "insert"
set ylabel "k ops/s"
set yrange [0:*]
set logscale x 10
set xlabel "pre-filled blocks"
plot $Size_insert using 1:3:xtic(2) with linespoints title "MicrosoftData" lc rgb "#1f77b4" dt 1 pt 7, $Size_insert using 1:4:xtic(2) with linespoints title "SystemData" lc rgb "#ff7f0e" dt 1 pt 8, $Size_insert using 1:5:xtic(2) with linespoints title "PInvoke" lc rgb "#2ca02c" dt 1 pt 9, $Size_insert using 1:6:xtic(2) with linespoints title "Native" lc rgb "#000000" dt 1 pt 10
$Size_xor_select_insert << EOD
10000 "1e4" 207.528993 226.220248 252.661606 288.007214
100000 "1e5" 159.347572 163.651916 198.472493 211.141519
1000000 "1e6" 62.299493 64.137055 67.514243 70.252558
10000000 "1e7" 33.659193 34.653166 36.143185 29.338713
EOD
set title "xor-select-insert"
set ylabel "k ops/s"
set yrange [0:*]
set logscale x 10
set xlabel "pre-filled blocks"
plot $Size_xor_select_insert using 1:3:xtic(2) with linespoints title "MicrosoftData" lc rgb "#1f77b4" dt 1 pt 7, $Size_xor_select_insert using 1:4:xtic(2) with linespoints title "SystemData" lc rgb "#ff7f0e" dt 1 pt 8, $Size_xor_select_insert using 1:5:xtic(2) with linespoints title "PInvoke" lc rgb "#2ca02c" dt 1 pt 9, $Size_xor_select_insert using 1:6:xtic(2) with linespoints title "Native" lc rgb "#000000" dt 1 pt 10
$Size_xor_ignore_select << EOD
10000 "1e4" 293.392214 327.037496 454.264854 492.416947
100000 "1e5" 214.539105 239.095906 298.57388 326.785274
1000000 "1e6" 70.646349 71.442078 75.125695 77.878228
EOD
set title "xor-ignore-select"
set ylabel "k ops/s"
set yrange [0:*]
set logscale x 10
set xlabel "pre-filled blocks"
plot $Size_xor_ignore_select using 1:3:xtic(2) with linespoints title "MicrosoftData" lc rgb "#1f77b4" dt 1 pt 7, $Size_xor_ignore_select using 1:4:xtic(2) with linespoints title "SystemData" lc rgb "#ff7f0e" dt 1 pt 8, $Size_xor_ignore_select using 1:5:xtic(2) with linespoints title "PInvoke" lc rgb "#2ca02c" dt 1 pt 9, $Size_xor_ignore_select using 1:6:xtic(2) with linespoints title "Native" lc rgb "#000000" dt 1 pt 10
$Size_xor_returning << EOD
10000 "1e4" 226.897398 245.844405 278.39506 301.514064
100000 "1e5" 169.605787 183.16412 206.868444 222.974412
1000000 "1e6" 61.924681 61.850281 63.838786 65.833019
EOD
set title "xor-returning"
set ylabel "k ops/s"
set yrange [0:*]
set logscale x 10
set xlabel "pre-filled blocks"
plot $Size_xor_returning using 1:3:xtic(2) with linespoints title "MicrosoftData" lc rgb "#1f77b4" dt 1 pt 7, $Size_xor_returning using 1:4:xtic(2) with linespoints title "SystemData" lc rgb "#ff7f0e" dt 1 pt 8, $Size_xor_returning using 1:5:xtic(2) with linespoints title "PInvoke" lc rgb "#2ca02c" dt 1 pt 9, $Size_xor_returning using 1:6:xtic(2) with linespoints title "Native" lc rgb "#000000" dt 1 pt 10
$Size_join << EOD
10000 "1e4" 135.83257 150.740258 212.211892 245.144034
100000 "1e5" 127.130477 142.504723 195.991535 239.515912
1000000 "1e6" 91.508713 99.040012 130.81301 146.744227
EOD
set title "join"
set ylabel "k ops/s"
set yrange [0:*]
set logscale x 10
set xlabel "pre-filled blocks"
plot $Size_join using 1:3:xtic(2) with linespoints title "MicrosoftData" lc rgb "#1f77b4" dt 1 pt 7, $Size_join using 1:4:xtic(2) with linespoints title "SystemData" lc rgb "#ff7f0e" dt 1 pt 8, $Size_join using 1:5:xtic(2) with linespoints title "PInvoke" lc rgb "#2ca02c" dt 1 pt 9, $Size_join using 1:6:xtic(2) with linespoints title "Native" lc rgb "#000000" dt 1 pt 10
$Size_new_blockset << EOD
10000 "1e4" 7.165109 8.25962 11.488679 12.01864
100000 "1e5" 5.677713 6.593637 8.503405 8.778138
1000000 "1e6" 2.994055 3.033831 3.341618 3.44412
EOD
set title "new-blockset"
set ylabel "k ops/s"
set yrange [0:*]
set logscale x 10
set xlabel "pre-filled blocks"
plot $Size_new_blockset using 1:3:xtic(2) with linespoints title "MicrosoftData" lc rgb "#1f77b4" dt 1 pt 7, $Size_new_blockset using 1:4:xtic(2) with linespoints title "SystemData" lc rgb "#ff7f0e" dt 1 pt 8, $Size_new_blockset using 1:5:xtic(2) with linespoints title "PInvoke" lc rgb "#2ca02c" dt 1 pt 9, $Size_new_blockset using 1:6:xtic(2) with linespoints title "Native" lc rgb "#000000" dt 1 pt 10
unset multiplot
