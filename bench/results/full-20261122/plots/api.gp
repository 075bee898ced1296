set terminal pngcairo size 1560,390 enhanced font "Sans,9"
set output "api.png"
set datafile missing "?"
set grid ytics
set key below horizontal font ",7" samplen 2
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set xtics rotate by -30
set multiplot layout 1,3 title "Api study: k ops/s (median of 4)"
$Api_select << EOD
0 "async" 185.010284 201.701002 233.911098 ?
1 "sync" 191.565479 201.28773 226.296018 ?
2 "driver" 178.857311 187.781103 215.600706 ?
3 "native" ? ? ? 239.203022
EOD
set title "select"
set ylabel "k ops/s"
set yrange [0:*]
set xlabel ""
plot $Api_select using 3:xtic(2) title "MicrosoftData" lc rgb "#1f77b4", '' using 4 title "SystemData" lc rgb "#ff7f0e", '' using 5 title "PInvoke" lc rgb "#2ca02c", '' using 6 title "Native" lc rgb "#000000"
$Api_insert << EOD
0 "async" 60.64888 63.885945 65.749232 ?
1 "sync" 52.430075 50.93414 57.039115 ?
2 "driver" 58.452742 60.062428 65.16127 ?
3 "native" ? ? ? 66.430408
EOD
set title "insert"
set ylabel "k ops/s"
set yrange [0:*]
set xlabel ""
plot $Api_insert using 3:xtic(2) title "MicrosoftData" lc rgb "#1f77b4", '' using 4 title "SystemData" lc rgb "#ff7f0e", '' using 5 title "PInvoke" lc rgb "#2ca02c", '' using 6 title "Native" lc rgb "#000000"
$Api_xor_select_insert << EOD
0 "async" 62.299493 64.137055 67.514243 ?
1 "sync" 60.967249 63.471887 67.642124 ?
2 "driver" 62.797989 63.504404 69.493839 ?
3 "native" ? ? ? 70.252558
EOD
set title "xor-select-insert"
set ylabel "k ops/s"
set yrange [0:*]
set xlabel ""
plot $Api_xor_select_insert using 3:xtic(2) title "MicrosoftData" lc rgb "#1f77b4", '' using 4 title "SystemData" lc rgb "#ff7f0e", '' using 5 title "PInvoke" lc rgb "#2ca02c", '' using 6 title "Native" lc rgb "#000000"
unset multiplot
