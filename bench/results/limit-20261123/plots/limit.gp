set terminal pngcairo size 1560,390 enhanced font "Sans,9"
set output "limit.png"
set datafile missing "?"
set grid ytics
set key below horizontal font ",7" samplen 2
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set xtics rotate by -30
set multiplot layout 1,3 title "Limit study: k ops/s (median of 3)"
$Limit_select << EOD
0 "TextHash" 87.020651 72.290699 115.338679 113.060652 43.060537 39.130126 55.92272 54.197832 143.767956
1 "BlobHash" 40.221004 47.788545 97.240131 86.764695 23.380818 18.447238 26.991585 26.049889 58.51897
2 "KeyMap" 47.377543 52.429048 70.844297 73.81885 33.713349 26.154456 31.881578 25.73182 79.674485
EOD
set title "select"
set ylabel "k ops/s"
set yrange [0:*]
set xlabel ""
plot $Limit_select using 3:xtic(2) title "MicrosoftData reads=default" lc rgb "#1f77b4", '' using 4 title "SystemData reads=default" lc rgb "#ff7f0e", '' using 5 title "PInvoke reads=default" lc rgb "#2ca02c", '' using 6 title "Native reads=default" lc rgb "#000000", '' using 7 title "MicrosoftData reads=1" lc rgb "#1f77b4", '' using 8 title "SystemData reads=1" lc rgb "#ff7f0e", '' using 9 title "PInvoke reads=1" lc rgb "#2ca02c", '' using 10 title "Native reads=1" lc rgb "#000000", '' using 11 title "NativePlain" lc rgb "#7f7f7f"
$Limit_xor_select_insert << EOD
0 "TextHash" 6.495382 8.734092 10.374406 7.489482 7.475356 7.808307 8.834714 9.338726 17.758345
1 "BlobHash" 10.366032 7.675798 8.672093 9.586191 8.587295 7.996929 9.927665 7.951276 20.778896
2 "KeyMap" 44.197518 40.932066 50.617561 73.430462 42.007163 39.710219 52.138799 76.229635 84.169867
EOD
set title "xor-select-insert"
set ylabel "k ops/s"
set yrange [0:*]
set xlabel ""
plot $Limit_xor_select_insert using 3:xtic(2) title "MicrosoftData reads=default" lc rgb "#1f77b4", '' using 4 title "SystemData reads=default" lc rgb "#ff7f0e", '' using 5 title "PInvoke reads=default" lc rgb "#2ca02c", '' using 6 title "Native reads=default" lc rgb "#000000", '' using 7 title "MicrosoftData reads=1" lc rgb "#1f77b4", '' using 8 title "SystemData reads=1" lc rgb "#ff7f0e", '' using 9 title "PInvoke reads=1" lc rgb "#2ca02c", '' using 10 title "Native reads=1" lc rgb "#000000", '' using 11 title "NativePlain" lc rgb "#7f7f7f"
$Limit_xor_hit << EOD
0 "TextHash" 79.939257 67.78629 90.332915 132.265509 39.261144 36.932249 48.076548 64.287102 118.729795
1 "BlobHash" 68.487465 110.87286 118.03652 155.241538 53.900105 53.927732 63.82766 59.61079 125.852974
2 "KeyMap" 87.902986 92.306791 139.015359 144.69585 47.364649 39.21259 55.449698 66.350708 197.677493
EOD
set title "xor-hit"
set ylabel "k ops/s"
set yrange [0:*]
set xlabel ""
plot $Limit_xor_hit using 3:xtic(2) title "MicrosoftData reads=default" lc rgb "#1f77b4", '' using 4 title "SystemData reads=default" lc rgb "#ff7f0e", '' using 5 title "PInvoke reads=default" lc rgb "#2ca02c", '' using 6 title "Native reads=default" lc rgb "#000000", '' using 7 title "MicrosoftData reads=1" lc rgb "#1f77b4", '' using 8 title "SystemData reads=1" lc rgb "#ff7f0e", '' using 9 title "PInvoke reads=1" lc rgb "#2ca02c", '' using 10 title "Native reads=1" lc rgb "#000000", '' using 11 title "NativePlain" lc rgb "#7f7f7f"
unset multiplot
