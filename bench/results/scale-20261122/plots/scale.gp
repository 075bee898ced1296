set terminal pngcairo size 1040,390 enhanced font "Sans,9"
set output "scale.png"
set datafile missing "?"
set grid ytics
set key below horizontal font ",7" samplen 2
set multiplot layout 1,2 title "Scale study: us per op by layout (median of 2; lower is better)"
$Scale_select << EOD
100000 "1e5" 4.425686 4.271362 3.660988 3.470566 5.276271 4.725318 3.932867 5.609491 5.089249 4.007898
1000000 "1e6" 5.116341 5.052987 4.631248 4.808128 5.475373 5.15721 4.315258 5.962645 5.46232 4.210141
10000000 "1e7" 7.761215 7.648675 7.059638 6.296983 7.707033 8.236629 8.233917 8.190034 7.213577 6.903966
EOD
set title "select"
set ylabel "us per op"
set yrange [0:*]
set logscale x 10
set xlabel "pre-filled blocks"
plot $Scale_select using 1:3:xtic(2) with linespoints title "MicrosoftData TextHash" lc rgb "#1f77b4" dt 2 pt 7, $Scale_select using 1:4:xtic(2) with linespoints title "SystemData TextHash" lc rgb "#ff7f0e" dt 2 pt 8, $Scale_select using 1:5:xtic(2) with linespoints title "PInvoke TextHash" lc rgb "#2ca02c" dt 2 pt 9, $Scale_select using 1:6:xtic(2) with linespoints title "Native TextHash" lc rgb "#000000" dt 2 pt 10, $Scale_select using 1:7:xtic(2) with linespoints title "MicrosoftData BlobHash" lc rgb "#1f77b4" dt 3 pt 11, $Scale_select using 1:8:xtic(2) with linespoints title "SystemData BlobHash" lc rgb "#ff7f0e" dt 3 pt 12, $Scale_select using 1:9:xtic(2) with linespoints title "PInvoke BlobHash" lc rgb "#2ca02c" dt 3 pt 7, $Scale_select using 1:10:xtic(2) with linespoints title "MicrosoftData KeyMap" lc rgb "#1f77b4" dt 1 pt 8, $Scale_select using 1:11:xtic(2) with linespoints title "SystemData KeyMap" lc rgb "#ff7f0e" dt 1 pt 9, $Scale_select using 1:12:xtic(2) with linespoints title "PInvoke KeyMap" lc rgb "#2ca02c" dt 1 pt 10
$Scale_xor_select_insert << EOD
100000 "1e5" 23.624513 23.910884 19.234993 17.142174 17.375093 16.298046 20.654532 3.711876 3.587657 2.576932
1000000 "1e6" 30.791979 34.512612 29.314136 27.263653 34.063332 32.264835 30.599852 3.773946 3.350512 2.507516
10000000 "1e7" 65.368741 46.211949 49.216746 44.181338 43.155728 42.852793 41.400321 4.293247 4.088129 2.860691
EOD
set title "xor-select-insert"
set ylabel "us per op"
set yrange [0:*]
set logscale x 10
set xlabel "pre-filled blocks"
plot $Scale_xor_select_insert using 1:3:xtic(2) with linespoints title "MicrosoftData TextHash" lc rgb "#1f77b4" dt 2 pt 7, $Scale_xor_select_insert using 1:4:xtic(2) with linespoints title "SystemData TextHash" lc rgb "#ff7f0e" dt 2 pt 8, $Scale_xor_select_insert using 1:5:xtic(2) with linespoints title "PInvoke TextHash" lc rgb "#2ca02c" dt 2 pt 9, $Scale_xor_select_insert using 1:6:xtic(2) with linespoints title "Native TextHash" lc rgb "#000000" dt 2 pt 10, $Scale_xor_select_insert using 1:7:xtic(2) with linespoints title "MicrosoftData BlobHash" lc rgb "#1f77b4" dt 3 pt 11, $Scale_xor_select_insert using 1:8:xtic(2) with linespoints title "SystemData BlobHash" lc rgb "#ff7f0e" dt 3 pt 12, $Scale_xor_select_insert using 1:9:xtic(2) with linespoints title "PInvoke BlobHash" lc rgb "#2ca02c" dt 3 pt 7, $Scale_xor_select_insert using 1:10:xtic(2) with linespoints title "MicrosoftData KeyMap" lc rgb "#1f77b4" dt 1 pt 8, $Scale_xor_select_insert using 1:11:xtic(2) with linespoints title "SystemData KeyMap" lc rgb "#ff7f0e" dt 1 pt 9, $Scale_xor_select_insert using 1:12:xtic(2) with linespoints title "PInvoke KeyMap" lc rgb "#2ca02c" dt 1 pt 10
unset multiplot
