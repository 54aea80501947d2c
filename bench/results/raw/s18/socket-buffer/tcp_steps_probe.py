# pairwise/ring exchange probe: rank i of N, addresses base.1..N
import socket, sys, time, threading, struct
i, n, base, pattern, size, calls = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6])
addr = lambda r: f"{base}.{r+1}"
PORT = 23456
ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind((addr(i), PORT)); ls.listen(16)
conn = {}
def acc():
    for _ in range(i):
        c, _a = ls.accept(); r = struct.unpack("i", c.recv(4))[0]; conn[r] = c
t = threading.Thread(target=acc); t.start()
for r in range(i+1, n):
    while True:
        try:
            c = socket.create_connection((addr(r), PORT)); break
        except OSError: time.sleep(0.05)
    c.sendall(struct.pack("i", i)); conn[r] = c
t.join()
import os
for c in conn.values():
    if os.environ.get("SNDBUF") == "auto":
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1); continue
    c.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, int(os.environ.get("SNDBUF", 4<<20))); c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4<<20)
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
buf = bytearray(size); rb = bytearray(size)
def step(to, frm):
    th = threading.Thread(target=conn[to].sendall, args=(buf,)); th.start()
    v = memoryview(rb); got = 0
    while got < size: got += conn[frm].recv_into(v[got:], size - got)
    th.join()
def barrier():
    for r in range(n):
        if r != i: conn[r].sendall(b"b")
    for r in range(n):
        if r != i: conn[r].recv(1)
for c in range(calls + 2):
    if c == 2: barrier(); t0 = time.time()
    for k in range(1, n):
        if pattern == "pairwise": step((i+k) % n, (i-k) % n)
        else: step((i+1) % n, (i-1) % n)
dt = (time.time() - t0) / calls
print(f"rank {i} {pattern} {size} B per step x {n-1} steps: {dt*1e3:.1f} ms per call, {size*(n-1)/dt/1e6:.1f} MB/s out")
