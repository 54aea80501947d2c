# cc-lib.sh — sourced by the congestion testbeds' guest scripts (cc-suite.sh:
# four hosts in one VM; stacks-guest.sh: two VMs): rxe counters, the
# figures read from a gdr-rdma-test job's output in /tmp/job.NAME, and the
# incast table's row. POSIX sh (busybox).

# gid DEV: the index of DEV's IPv4-mapped RoCEv2 GID (empty while the table fills).
gid() { g=$(grep -l '0000:0000:0000:0000:0000:ffff:' /sys/class/infiniband/$1/ports/1/gids/* 2>/dev/null | head -1); echo "${g##*/}"; }
cnt() { cat /sys/class/infiniband/$1/ports/1/hw_counters/$2 2>/dev/null || echo 0; }
retries() { echo $(( $(cnt $1 completer_retry_err) )); }
seqnaks() { echo $(( $(cnt $1 rcvd_seq_err) )); }
# MB/s of the job's timed pass, from its "bandwidth: N x B bytes in T s"
# line (the figure printed after it has one decimal: 0.1 at incast's rates).
mbps() { sed -n 's/.*bandwidth: \([0-9]*\) x \([0-9]*\) bytes in \([0-9.]*\) s = .*/\1 \2 \3/p' /tmp/job.$1 2>/dev/null | head -1 |
    awk '$3 > 0 { printf "%.3f", $1 * $2 / $3 / 1e6 }'; }
ccline() { grep -a 'cc [a-z]*: [0-9]* chunks' /tmp/job.$1 | grep 'rank 0 -> rank 1' | head -1 |
    sed 's/.*cc [a-z]*: //; s/ (peer_cc.*//'; }
p99() { ccline $1 | sed -n 's/.*p99 \([0-9]*\) us.*/\1/p'; }
win() { ccline $1 | sed -n 's/.*window \([0-9]*\) now (\([0-9]*-[0-9]*\)).*/\1 (\2)/p'; }
# incast_row TAG VARIANT X0 X1 X2 S B P99 RETRANSMISSIONS NAKS DROPS: one
# row of the incast table (senders' MB/s, empty for one that failed; S MB
# each, bottleneck B MB/s): goodput, the slowest sender's time against the
# ideal 3 S / B, Jain's index.
incast_row() {
    awk -v tag="$1" -v v="$2" -v a="$3" -v b="$4" -v c="$5" -v s="$6" -v B="$7" -v p="$8" \
        -v rr="$9" -v qq="${10}" -v dd="${11}" 'BEGIN {
        g = a + b + c; t = 0
        if (a > 0 && s / a > t) t = s / a; if (b > 0 && s / b > t) t = s / b; if (c > 0 && s / c > t) t = s / c
        j = (a * a + b * b + c * c) > 0 ? g * g / (3 * (a * a + b * b + c * c)) : 0
        printf "===== [%s] | %s | %s, %s, %s | %.3f | %.2f | %.2f | %.3f | %d | %d | %s | %d |\n",
            tag, v, a, b, c, g, t, t / (3 * s / B), j, rr, qq, p, dd }'
}
