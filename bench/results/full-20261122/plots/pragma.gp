set terminal pngcairo size 1560,750 enhanced font "Sans,9"
set output "pragma.png"
set datafile missing "?"
set grid ytics
set key below horizontal font ",7" samplen 2
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set xtics rotate by -30
set multiplot layout 2,3 title "Pragma study: k ops/s (median of 4)"
$Pragma_select << EOD
0 "defaults" 117.040271 123.093546 136.246237 139.20803
1 "journal-wal" 177.087396 197.943383 220.238922 229.021331
2 "sync-normal" 111.933948 114.601113 129.169485 129.604777
3 "sync-off" 115.654253 106.985032 131.417095 131.793773
4 "temp-memory" 115.030898 109.27625 130.859238 133.964556
5 "cache-64m" 110.586581 118.882734 129.120111 126.53759
6 "mmap-64m" 134.838086 137.867209 156.264712 161.739295
7 "threads-8" 117.900689 122.799994 135.110269 138.526659
8 "recommended" 185.010284 201.701002 233.911098 239.203022
EOD
set title "select"
set ylabel "k ops/s"
set yrange [0:*]
set xlabel ""
plot $Pragma_select using 3:xtic(2) title "MicrosoftData" lc rgb "#1f77b4", '' using 4 title "SystemData" lc rgb "#ff7f0e", '' using 5 title "PInvoke" lc rgb "#2ca02c", '' using 6 title "Native" lc rgb "#000000"
$Pragma_insert << EOD
0 "defaults" 51.935569 54.497464 55.549224 55.732435
1 "journal-wal" 46.447831 47.446383 49.65404 49.416674
2 "sync-normal" 39.471473 43.976722 42.025856 44.520303
3 "sync-off" 70.44432 74.658953 79.91344 79.755499
4 "temp-memory" 45.906363 45.877624 46.133362 48.207552
5 "cache-64m" 61.332789 62.408414 62.948183 64.394121
6 "mmap-64m" 52.116961 53.521742 52.378617 54.111802
7 "threads-8" 41.057818 44.984816 46.644966 48.147932
8 "recommended" 60.64888 63.885945 65.749232 66.430408
EOD
set title "insert"
set ylabel "k ops/s"
set yrange [0:*]
set xlabel ""
plot $Pragma_insert using 3:xtic(2) title "MicrosoftData" lc rgb "#1f77b4", '' using 4 title "SystemData" lc rgb "#ff7f0e", '' using 5 title "PInvoke" lc rgb "#2ca02c", '' using 6 title "Native" lc rgb "#000000"
$Pragma_xor_select_insert << EOD
0 "defaults" 51.526022 51.784022 53.951018 55.612537
1 "journal-wal" 46.691024 48.90365 52.419394 53.409306
2 "sync-normal" 50.14959 51.864532 53.905955 54.549662
3 "sync-off" 76.912082 78.885113 83.863229 89.57146
4 "temp-memory" 53.637109 54.969477 57.643544 57.946491
5 "cache-64m" 60.957787 62.521531 65.342628 66.290393
6 "mmap-64m" 46.189473 47.901048 50.647965 51.453559
7 "threads-8" 52.949782 55.450739 57.23098 58.668502
8 "recommended" 62.299493 64.137055 67.514243 70.252558
EOD
set title "xor-select-insert"
set ylabel "k ops/s"
set yrange [0:*]
set xlabel ""
plot $Pragma_xor_select_insert using 3:xtic(2) title "MicrosoftData" lc rgb "#1f77b4", '' using 4 title "SystemData" lc rgb "#ff7f0e", '' using 5 title "PInvoke" lc rgb "#2ca02c", '' using 6 title "Native" lc rgb "#000000"
$Pragma_join << EOD
0 "defaults" 71.606167 75.295505 93.21824 97.06346
1 "journal-wal" 89.234103 99.333739 124.902512 144.397765
2 "sync-normal" 70.430946 73.829353 88.878629 99.164202
3 "sync-off" 69.145049 69.616283 90.438584 99.44772
4 "temp-memory" 66.702642 72.226603 88.473351 97.127652
5 "cache-64m" 69.050295 72.415462 89.823265 96.359189
6 "mmap-64m" 76.395345 81.068872 100.735325 112.165657
7 "threads-8" 70.917528 76.226822 92.055417 100.243955
8 "recommended" 91.508713 99.040012 130.81301 146.744227
EOD
set title "join"
set ylabel "k ops/s"
set yrange [0:*]
set xlabel ""
plot $Pragma_join using 3:xtic(2) title "MicrosoftData" lc rgb "#1f77b4", '' using 4 title "SystemData" lc rgb "#ff7f0e", '' using 5 title "PInvoke" lc rgb "#2ca02c", '' using 6 title "Native" lc rgb "#000000"
$Pragma_new_blockset << EOD
0 "defaults" 2.046695 2.042484 2.190278 2.250735
1 "journal-wal" 2.143031 2.255488 2.3555 2.452886
2 "sync-normal" 2.307787 2.445173 2.564455 2.627073
3 "sync-off" 3.410998 3.473283 3.964726 4.083353
4 "temp-memory" 2.446808 2.470791 2.823313 2.841279
5 "cache-64m" 2.407445 2.435274 2.783866 2.780562
6 "mmap-64m" 2.026899 2.153448 2.251213 2.327884
7 "threads-8" 2.301964 2.414282 2.627037 2.742438
8 "recommended" 2.994055 3.033831 3.341618 3.44412
EOD
set title "new-blockset"
set ylabel "k ops/s"
set yrange [0:*]
set xlabel ""
plot $Pragma_new_blockset using 3:xtic(2) title "MicrosoftData" lc rgb "#1f77b4", '' using 4 title "SystemData" lc rgb "#ff7f0e", '' using 5 title "PInvoke" lc rgb "#2ca02c", '' using 6 title "Native" lc rgb "#000000"
unset multiplot
