# vm-image.sh — sourced by the host scripts that boot the Soft-RoCE VMs
# (rxe-test.sh, stacks.sh), with HERE, BUILD, OUT and WHAT (the test's name)
# set: cant_run says why the VM cannot run and exits (77, skipped, under
# GDR_SKIP_RDMA=1; else 1); vm_image builds or reuses the image in $OUT.
cant_run() {
    echo "$WHAT: cannot run the Soft-RoCE VM: $*"
    if [ "${GDR_SKIP_RDMA:-0}" = 1 ]; then echo "$WHAT: SKIPPED (GDR_SKIP_RDMA=1)"; exit 77; fi
    echo "$WHAT: FAILED (set GDR_SKIP_RDMA=1 to skip on machines that cannot run it)"
    exit 1
}
vm_image() {
    mkdir -p "$OUT"
    timeout 900 "$HERE/build-image.sh" "$BUILD" > "$OUT/build.log" 2>&1 || {
        tail -5 "$OUT/build.log"; cant_run "image build failed (see $OUT/build.log)"; }
    tail -1 "$OUT/build.log"
    command -v qemu-system-x86_64 >/dev/null || cant_run "qemu-system-x86_64 is not installed"
}
