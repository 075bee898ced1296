set terminal pngcairo size 1560,750 enhanced font "Sans,9"
set output "batch.png"
set datafile missing "?"
set grid ytics
set key below horizontal font ",7" samplen 2
set multiplot layout 2,3 title "Batch study: k ops/s (median of 4)"
$Batch_insert << EOD
1 "1" 20.492513 19.744535 21.051123 20.914064
16 "16" 28.177787 28.288256 28.947121 28.317861
256 "256" 26.610864 27.515261 28.133337 27.60569
4096 "4096" 36.712473 38.036528 38.547244 40.134488
65536 "65536" 61.885323 63.908534 65.227306 64.98178
262144 "all" 60.64888 63.885945 65.749232 66.430408
EOD
set title "insert"
set ylabel "k ops/s"
set yrange [0:*]
set logscale x 2
set xlabel "commit every (writes)"
plot $Batch_insert using 1:3:xtic(2) with linespoints title "MicrosoftData" lc rgb "#1f77b4" dt 1 pt 7, $Batch_insert using 1:4:xtic(2) with linespoints title "SystemData" lc rgb "#ff7f0e" dt 1 pt 8, $Batch_insert using 1:5:xtic(2) with linespoints title "PInvoke" lc rgb "#2ca02c" dt 1 pt 9, $Batch_insert using 1:6:xtic(2) with linespoints title "Native" lc rgb "#000000" dt 1 pt 10
$Batch_xor_select_insert << EOD
1 "1" 18.717278 19.249475 18.850955 17.945075
16 "16" 27.402535 25.57791 29.2793 27.946625
256 "256" 30.080402 29.090383 30.856362 31.153015
4096 "4096" 36.455682 39.636065 38.801149 40.737099
65536 "65536" 55.495915 59.454771 65.193235 65.887841
262144 "all" 62.299493 64.137055 67.514243 70.252558
EOD
set title "xor-select-insert"
set ylabel "k ops/s"
set yrange [0:*]
set logscale x 2
set xlabel "commit every (writes)"
plot $Batch_xor_select_insert using 1:3:xtic(2) with linespoints title "MicrosoftData" lc rgb "#1f77b4" dt 1 pt 7, $Batch_xor_select_insert using 1:4:xtic(2) with linespoints title "SystemData" lc rgb "#ff7f0e" dt 1 pt 8, $Batch_xor_select_insert using 1:5:xtic(2) with linespoints title "PInvoke" lc rgb "#2ca02c" dt 1 pt 9, $Batch_xor_select_insert using 1:6:xtic(2) with linespoints title "Native" lc rgb "#000000" dt 1 pt 10
$Batch_xor_ignore_select << EOD
1 "1" 24.123594 24.176235 26.226393 25.756665
16 "16" 31.687949 35.934947 36.577629 34.503119
256 "256" 36.398319 38.140143 39.349754 39.434782
4096 "4096" 50.450012 50.360039 54.171364 52.128717
65536 "65536" 69.662385 73.954637 78.53659 80.081547
262144 "all" 70.646349 71.442078 75.125695 77.878228
EOD
set title "xor-ignore-select"
set ylabel "k ops/s"
set yrange [0:*]
set logscale x 2
set xlabel "commit every (writes)"
plot $Batch_xor_ignore_select using 1:3:xtic(2) with linespoints title "MicrosoftData" lc rgb "#1f77b4" dt 1 pt 7, $Batch_xor_ignore_select using 1:4:xtic(2) with linespoints title "SystemData" lc rgb "#ff7f0e" dt 1 pt 8, $Batch_xor_ignore_select using 1:5:xtic(2) with linespoints title "PInvoke" lc rgb "#2ca02c" dt 1 pt 9, $Batch_xor_ignore_select using 1:6:xtic(2) with linespoints title "Native" lc rgb "#000000" dt 1 pt 10
$Batch_xor_returning << EOD
1 "1" 21.112174 21.818241 20.734531 20.520576
16 "16" 30.061823 29.947013 33.226003 32.167525
256 "256" 30.456352 31.190937 33.098484 30.894858
4096 "4096" 44.250286 46.74534 47.726455 48.860707
65536 "65536" 60.002063 65.698656 68.263021 67.135618
262144 "all" 61.924681 61.850281 63.838786 65.833019
EOD
set title "xor-returning"
set ylabel "k ops/s"
set yrange [0:*]
set logscale x 2
set xlabel "commit every (writes)"
plot $Batch_xor_returning using 1:3:xtic(2) with linespoints title "MicrosoftData" lc rgb "#1f77b4" dt 1 pt 7, $Batch_xor_returning using 1:4:xtic(2) with linespoints title "SystemData" lc rgb "#ff7f0e" dt 1 pt 8, $Batch_xor_returning using 1:5:xtic(2) with linespoints title "PInvoke" lc rgb "#2ca02c" dt 1 pt 9, $Batch_xor_returning using 1:6:xtic(2) with linespoints title "Native" lc rgb "#000000" dt 1 pt 10
$Batch_new_blockset << EOD
1 "1" 1.052881 1.117273 1.179344 1.12719
16 "16" 1.17424 1.241651 1.340031 1.246502
256 "256" 1.584091 1.472909 1.68119 1.705888
4096 "4096" 2.061332 2.104136 2.277276 2.257386
65536 "65536" 2.853347 2.959612 3.270792 3.161412
262144 "all" 2.994055 3.033831 3.341618 3.44412
EOD
set title "new-blockset"
set ylabel "k ops/s"
set yrange [0:*]
set logscale x 2
set xlabel "commit every (writes)"
plot $Batch_new_blockset using 1:3:xtic(2) with linespoints title "MicrosoftData" lc rgb "#1f77b4" dt 1 pt 7, $Batch_new_blockset using 1:4:xtic(2) with linespoints title "SystemData" lc rgb "#ff7f0e" dt 1 pt 8, $Batch_new_blockset using 1:5:xtic(2) with linespoints title "PInvoke" lc rgb "#2ca02c" dt 1 pt 9, $Batch_new_blockset using 1:6:xtic(2) with linespoints title "Native" lc rgb "#000000" dt 1 pt 10
unset multiplot
