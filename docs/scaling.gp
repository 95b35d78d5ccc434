# The scaling curve of docs/PERFORMANCE.md §1 (PipelineBenchmark, 2026-11-29, medians at 80,000 devices).
# Redraw with: gnuplot docs/scaling.gp   (writes docs/scaling.png)
set terminal pngcairo size 760,420 font ",10"
set output "docs/scaling.png"
set title "devhealth pipeline on 2 cores: latency against fleet size (15 s keep-alive, 30 s timeout)"
set logscale x
set xlabel "simulated devices"
set ylabel "milliseconds"
set xtics ("1,000" 1000, "10,000" 10000, "80,000" 80000)
set yrange [0:1400]
set key top left
set grid ytics
set arrow from 800,1000 to 100000,1000 nohead dashtype 2 lc rgb "#aa0000"
set label "target: p99 and lateness <= 1 s" at 75000,1045 right tc rgb "#aa0000"
$data << EOD
# devices  e2e_p50  e2e_p99  silence_max
1000   122  232  728
10000  121  231  424
80000  138  561  479
EOD
plot $data using 1:2 with linespoints lw 2 pt 7 title "end-to-end p50", \
     $data using 1:3 with linespoints lw 2 pt 5 title "end-to-end p99", \
     $data using 1:4 with linespoints lw 2 pt 9 title "silence -> Unknown, max after deadline"
