"""torch.distributed on the nccl backend, every result checked against a
reference every rank computes itself. Meant to run with gdrcoll's
libnccl.so.2 preloaded (scripts/gpu/torch.sh), under torchrun:

    torchrun --standalone --nproc-per-node N tests/torch/dist_check.py --init eager|lazy

Ranks share GPUs when there are more ranks than GPUs (rank % device_count).
Prints one line per check ("CHECK <name> ok|FAIL|skip <detail>") and exits 1
if any failed. Also proves which libnccl the process runs on: the
/proc/self/maps lines that name a libnccl, and the version torch reports.
"""
import argparse
import ctypes
import os
import sys
import traceback

import torch
import torch.distributed as dist

RESULTS = []


def report(name, ok, detail=""):
    state = "ok" if ok is True else ("skip" if ok is None else "FAIL")
    RESULTS.append((name, state))
    print(f"CHECK rank{dist.get_rank()} {name} {state} {detail}".rstrip(), flush=True)


def run(name, fn):
    """Runs one check; an exception is a failure unless torch itself refuses
    the case before any NCCL call (then it is a skip, with torch's words)."""
    try:
        ok, detail = fn()
        report(name, ok, detail)
    except Exception as e:  # noqa: BLE001 - every failure is reported, none hidden
        text = f"{type(e).__name__}: {e}".replace("\n", " ")[:300]
        if "NCCL" not in text and "nccl" not in text and isinstance(e, (ValueError, NotImplementedError)):
            report(name, None, "torch refuses: " + text)
        else:
            report(name, False, text)
            traceback.print_exc()


def inputs(rank, n, dtype, seed, kind):
    """Rank `rank`'s input: small integers, exact in every dtype and under
    every op (products stay within [-8, 8] for two ranks)."""
    g = torch.Generator().manual_seed(seed * 1000 + rank)
    if kind == "product":
        x = torch.randint(1, 3, (n,), generator=g) * (1 - 2 * torch.randint(0, 2, (n,), generator=g))
    else:
        x = torch.randint(-8, 9, (n,), generator=g)
    return x.to(dtype)


def tol(dtype):
    return {torch.float32: 1e-6, torch.float16: 1e-3, torch.bfloat16: 1e-2}.get(dtype, 0.0)


def same(got, want, dtype):
    got = got.cpu().double()
    want = want.cpu().double()
    if got.shape != want.shape:
        return False, f"shape {tuple(got.shape)} want {tuple(want.shape)}"
    t = tol(dtype)
    bad = (got - want).abs() > t * want.abs().clamp(min=1.0)
    if bad.any():
        i = int(bad.nonzero()[0])
        return False, f"[{i}] = {got[i].item()} want {want[i].item()} ({int(bad.sum())} wrong)"
    return True, ""


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


def resolved_path(symbol):
    """The file that defines `symbol` in the process's global scope: where
    libtorch_cuda.so's undefined nccl* references bind (a preloaded library
    comes first in that scope)."""
    glob = ctypes.CDLL(None)
    addr = ctypes.cast(getattr(glob, symbol), ctypes.c_void_p).value
    info = _DlInfo()
    if not glob.dladdr(ctypes.c_void_p(addr), ctypes.byref(info)):
        return ""
    return os.path.realpath(info.dli_fname.decode())


def proof():
    """torch's own loader maps pip's libnccl.so.2 by path, so two libnccl
    files may be mapped; what counts is where torch's calls bind."""
    maps = open("/proc/self/maps").read().splitlines()
    paths = sorted({line.split()[-1] for line in maps if "libnccl" in line and "/" in line})
    ours = os.environ.get("GDR_EXPECT_NCCL", "")
    bound = {s: resolved_path(s) for s in ("ncclCommInitRankConfig", "ncclAllReduce", "ncclSend")}
    if ours:
        want = os.path.realpath(ours)
        ok = all(p == want for p in bound.values()) and any(os.path.realpath(p) == want for p in paths)
    else:
        ok = bool(paths)
    return ok, f"version {torch.cuda.nccl.version()} bound {sorted(set(bound.values()))} maps {paths}"


def check_all_reduce(dev, rank, ws, seed):
    ops = {"sum": dist.ReduceOp.SUM, "avg": dist.ReduceOp.AVG, "max": dist.ReduceOp.MAX,
           "min": dist.ReduceOp.MIN, "product": dist.ReduceOp.PRODUCT}
    for dtype in (torch.float32, torch.bfloat16, torch.float16, torch.int64):
        for name, op in ops.items():
            def one(dtype=dtype, name=name, op=op):
                n = 4099
                all_in = [inputs(r, n, torch.float64, seed, name) for r in range(ws)]
                stack = torch.stack(all_in)
                want = {"sum": stack.sum(0), "avg": stack.sum(0) / ws, "max": stack.max(0).values,
                        "min": stack.min(0).values, "product": stack.prod(0)}[name]
                if dtype == torch.int64 and name == "avg":
                    want = torch.div(stack.sum(0), ws, rounding_mode="trunc")
                x = all_in[rank].to(dtype).to(dev)
                dist.all_reduce(x, op=op)
                torch.cuda.synchronize(dev)
                return same(x, want.to(dtype), dtype)
            run(f"all_reduce {name} {str(dtype).split('.')[-1]}", one)


def check_colls(dev, rank, ws, seed):
    n = 1000

    def broadcast():
        root = ws - 1
        x = inputs(rank, n, torch.float32, seed, "b").to(dev)
        dist.broadcast(x, src=root)
        torch.cuda.synchronize(dev)
        return same(x, inputs(root, n, torch.float32, seed, "b"), torch.float32)

    def reduce():
        x = inputs(rank, n, torch.float32, seed, "r").to(dev)
        dist.reduce(x, dst=0, op=dist.ReduceOp.SUM)
        torch.cuda.synchronize(dev)
        if rank != 0:
            return True, "(not root)"
        return same(x, sum(inputs(r, n, torch.float64, seed, "r") for r in range(ws)), torch.float32)

    def all_gather():
        x = inputs(rank, n, torch.bfloat16, seed, "g").to(dev)
        out = torch.full((ws * n,), -99.0, dtype=torch.bfloat16, device=dev)
        dist.all_gather_into_tensor(out, x)
        torch.cuda.synchronize(dev)
        return same(out, torch.cat([inputs(r, n, torch.bfloat16, seed, "g") for r in range(ws)]), torch.bfloat16)

    def reduce_scatter():
        x = inputs(rank, ws * n, torch.float32, seed, "s").to(dev)
        out = torch.full((n,), -99.0, device=dev)
        dist.reduce_scatter_tensor(out, x, op=dist.ReduceOp.SUM)
        torch.cuda.synchronize(dev)
        full = sum(inputs(r, ws * n, torch.float64, seed, "s") for r in range(ws))
        return same(out, full[rank * n:(rank + 1) * n], torch.float32)

    def a2a_equal():
        x = inputs(rank, ws * n, torch.int64, seed, "a").to(dev)
        out = torch.full((ws * n,), -99, dtype=torch.int64, device=dev)
        dist.all_to_all_single(out, x)
        torch.cuda.synchronize(dev)
        want = torch.cat([inputs(r, ws * n, torch.int64, seed, "a")[rank * n:(rank + 1) * n] for r in range(ws)])
        return same(out, want, torch.int64)

    def a2a_uneven():
        # rank r sends r + 2 * j + 1 elements to rank j.
        def size(src, dst):
            return src + 2 * dst + 1
        send_sizes = [size(rank, j) for j in range(ws)]
        recv_sizes = [size(j, rank) for j in range(ws)]
        x = inputs(rank, sum(send_sizes), torch.float32, seed, "u").to(dev)
        out = torch.full((sum(recv_sizes),), -99.0, device=dev)
        dist.all_to_all_single(out, x, output_split_sizes=recv_sizes, input_split_sizes=send_sizes)
        torch.cuda.synchronize(dev)
        pieces = []
        for j in range(ws):
            theirs = inputs(j, sum(size(j, k) for k in range(ws)), torch.float32, seed, "u")
            off = sum(size(j, k) for k in range(rank))
            pieces.append(theirs[off:off + size(j, rank)])
        return same(out, torch.cat(pieces), torch.float32)

    def barrier():
        dist.barrier()
        return True, ""

    for name, fn in (("broadcast", broadcast), ("reduce", reduce), ("all_gather_into_tensor", all_gather),
                     ("reduce_scatter_tensor", reduce_scatter), ("all_to_all_single equal", a2a_equal),
                     ("all_to_all_single uneven", a2a_uneven), ("barrier", barrier)):
        run(name, fn)


def check_p2p(dev, rank, ws, seed):
    n = 5000
    if ws < 2:
        report("send/recv", None, "one rank")
        report("batch_isend_irecv", None, "one rank")
        return

    def send_recv():
        # Rank 0 and 1 trade in both directions; torch makes a pair
        # communicator whose first operation is this send.
        if rank > 1:
            return True, "(not in the pair)"
        peer = 1 - rank
        mine = inputs(rank, n, torch.float32, seed, "p").to(dev)
        got = torch.full((n,), -99.0, device=dev)
        if rank == 0:
            dist.send(mine, dst=peer)
            dist.recv(got, src=peer)
        else:
            dist.recv(got, src=peer)
            dist.send(mine, dst=peer)
        torch.cuda.synchronize(dev)
        return same(got, inputs(peer, n, torch.float32, seed, "p"), torch.float32)

    def batch():
        nxt, prv = (rank + 1) % ws, (rank - 1) % ws
        mine = inputs(rank, n, torch.float16, seed, "q").to(dev)
        got = torch.full((n,), -99.0, dtype=torch.float16, device=dev)
        reqs = dist.batch_isend_irecv([dist.P2POp(dist.isend, mine, nxt), dist.P2POp(dist.irecv, got, prv)])
        for r in reqs:
            r.wait()
        torch.cuda.synchronize(dev)
        return same(got, inputs(prv, n, torch.float16, seed, "q"), torch.float16)

    run("send/recv", send_recv)
    run("batch_isend_irecv", batch)


def check_groups(dev, rank, ws, seed, eager):
    def new_group():
        members = list(range(ws))[::-1] if ws > 1 else [0]
        g = dist.new_group(members)
        x = torch.full((7,), float(rank + 1), device=dev)
        dist.all_reduce(x, group=g)
        torch.cuda.synchronize(dev)
        return same(x, torch.full((7,), float(sum(r + 1 for r in members))), torch.float32)

    def split_group():
        if not eager:
            return None, "split_group needs a bound device (eager init)"
        # Each rank alone, or pairs: [[0], [1]] for two ranks.
        g = dist.split_group(split_ranks=[[r] for r in range(ws)])
        x = torch.full((5,), float(rank + 10), device=dev)
        dist.all_reduce(x, group=g)
        torch.cuda.synchronize(dev)
        return same(x, torch.full((5,), float(rank + 10)), torch.float32)

    run("new_group", new_group)
    run("split_group", split_group)


def train(dev, group, seed, steps=20):
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8)).to(dev)
    ids = [dev.index] if dev.type == "cuda" else None
    ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=ids, process_group=group)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
    g = torch.Generator().manual_seed(seed + 1 + dist.get_rank())
    for _ in range(steps):
        x = torch.randn(16, 32, generator=g).to(dev)
        y = torch.randn(16, 8, generator=g).to(dev)
        opt.zero_grad()
        torch.nn.functional.mse_loss(ddp(x), y).backward()
        opt.step()
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)
    return [p.detach().cpu().clone() for p in model.parameters()]


def check_ddp(dev, rank, ws, seed):
    def ddp():
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        ours = train(dev, None, seed)
        gloo = dist.new_group(backend="gloo")
        # The same training on the same GPU with gloo reducing the gradients;
        # should this torch's gloo refuse CUDA tensors, on the CPU instead
        # (then the matmuls differ in rounding, hence the looser bound).
        where, bound = "GPU", 1e-5
        try:
            ref = train(dev, gloo, seed)
        except RuntimeError as e:
            print(f"rank {rank}: gloo on CUDA tensors refused ({str(e)[:120]}); reference on the CPU", flush=True)
            where, bound = "CPU", 1e-4
            ref = train(torch.device("cpu"), gloo, seed)
        diff = max((a - b).abs().max().item() for a, b in zip(ours, ref))
        exact = all(torch.equal(a, b) for a, b in zip(ours, ref))
        return diff <= bound, (f"20 steps, max |nccl - gloo ({where})| = {diff:.3g}"
                               f"{' (bit-identical)' if exact else ''}")
    run("ddp 20 steps vs gloo", ddp)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--init", choices=["eager", "lazy"], default="lazy")
    ap.add_argument("--seed", type=int, default=int.from_bytes(os.urandom(3), "little"))
    args = ap.parse_args()
    local = int(os.environ.get("LOCAL_RANK", "0"))
    dev = torch.device("cuda", local % torch.cuda.device_count())
    torch.cuda.set_device(dev)
    if args.init == "eager":
        dist.init_process_group("nccl", device_id=dev)
    else:
        dist.init_process_group("nccl")
    rank, ws = dist.get_rank(), dist.get_world_size()
    # Every rank uses rank 0's seed: each computes every rank's input.
    s = torch.tensor([args.seed], dtype=torch.int64, device=dev)
    dist.broadcast(s, src=0)
    seed = int(s.item())
    if rank == 0:
        print(f"dist_check: {ws} ranks, init {args.init}, seed {seed}, {torch.cuda.device_count()} GPU(s), "
              f"torch {torch.__version__}", flush=True)
    run("our libnccl in /proc/self/maps", proof)
    check_all_reduce(dev, rank, ws, seed)
    check_colls(dev, rank, ws, seed)
    check_p2p(dev, rank, ws, seed)
    check_groups(dev, rank, ws, seed, args.init == "eager")
    check_ddp(dev, rank, ws, seed)
    failed = [n for n, st in RESULTS if st == "FAIL"]
    print(f"dist_check rank {rank}: {len(RESULTS) - len(failed)} of {len(RESULTS)} checks passed or skipped"
          + (f"; FAILED: {', '.join(failed)}" if failed else ""), flush=True)
    dist.destroy_process_group()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
