#!/bin/busybox sh
# /init of the Linux oracle harness's QEMU guest (crates/cli/tests/it/linux_oracle.rs builds the
# initramfs around it). Loads the USB and SCSI modules in modules.dep order, recording the
# enumeration and sd's scan of every disk with usbmon, then for every USB disk: records usbmon while `storlab probe`, sg3-utils and each job of /jobs run, and writes
# everything as a tar archive onto the results disk (/dev/vda), which the host unpacks.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t debugfs none /sys/kernel/debug
mount -t tmpfs tmp /tmp
export HOME=/tmp PATH=/bin
out=/tmp/out
mkdir -p $out
# usbmon loads before the host controllers (modules.dep order puts it first): from then on
# every bus's enumeration is recorded (/dev/usbmon0 is all buses), until the disks are scanned.
for module in $(cat /modules/order); do
    insmod "/modules/$module" || echo "oracle: insmod $module failed"
    if [ "$module" = usbmon.ko ]; then
        storlab usbmon-capture --device /dev/usbmon0 --output $out/enumeration.pcap \
            2>$out/enumeration.log &
        enumeration=$!
        renice -n -20 -p $enumeration >/dev/null
        sleep 0.5
    fi
done
# Wait for the four disks (SCSI scans run asynchronously after the drivers bind).
for _ in $(seq 100); do
    [ "$(ls /sys/block | grep -c '^sd')" -ge "$(cat /expected_disks)" ] && break
    sleep 0.2
done
sleep 1
kill -INT $enumeration
wait $enumeration
echo $? >$out/enumeration.capture_rc

# Runs "$@" while usbmon bus $bus is recorded into $out/$name/$1.pcap.
captured() {
    step=$1
    shift
    # The one vCPU must run the reader before usbmon's ring fills (a 1 MiB write's event
    # copies 240 KiB into it): the capture runs at the highest priority, the job at the lowest.
    # (busybox-static has renice, not nice.)
    storlab usbmon-capture --device "/dev/usbmon$bus" --output "$dir/$step.pcap" \
        2>>"$dir/capture.log" &
    capture=$!
    renice -n -20 -p $capture >/dev/null
    sleep 0.5
    sh -c 'renice -n 19 -p $$ >/dev/null; exec "$@"' job "$@" >"$dir/$step.out" 2>"$dir/$step.err"
    echo $? >"$dir/$step.rc"
    sleep 0.3
    kill -INT $capture
    wait $capture
    echo $? >"$dir/$step.capture_rc"
}

for block in /sys/block/sd*; do
    disk=${block##*/}
    usb=$(readlink -f "$block/device" | sed -n 's|.*/usb[0-9]*/\([0-9-]*\)/.*|\1|p' | sed 's|.*/||')
    usbdev=/sys/bus/usb/devices/$usb
    driver=$(basename "$(readlink -f "$usbdev/$usb:1.0/driver")")
    speed=$(cat "$usbdev/speed")
    name=$driver-$speed
    dir=$out/$name
    mkdir -p "$dir"
    bus=$(cat "$usbdev/busnum")
    echo "$disk" >"$dir/disk"
    cat "$usbdev/devnum" >"$dir/devnum"
    echo "$bus" >"$dir/busnum"
    for f in max_sectors_kb max_hw_sectors_kb nr_requests discard_max_bytes discard_granularity \
        rotational logical_block_size physical_block_size; do
        echo "$f $(cat "$block/queue/$f")" >>"$dir/sysfs"
    done
    echo "queue_depth $(cat "$block/device/queue_depth")" >>"$dir/sysfs"
    echo "size $(cat "$block/size")" >>"$dir/sysfs"
    captured probe storlab probe "/dev/$disk" --output-format json
    sg_inq --raw "/dev/$disk" >"$dir/sg_inq.bin" 2>/dev/null
    for page in 0x00 0x80 0x83 0xb0 0xb1 0xb2; do
        sg_vpd --page=$page --raw "/dev/$disk" >"$dir/sg_vpd_$page.bin" 2>/dev/null
    done
    sg_readcap --16 --raw "/dev/$disk" >"$dir/sg_readcap16.bin" 2>/dev/null
    while read -r job flags; do
        # shellcheck disable=SC2086
        # --destructive: the disk is the harness's own blank image, and the device guard's
        # signature check (libblkid's buffered reads) would land in the job's capture.
        captured "$job" storlab run --target "/dev/$disk" --destructive "/dev/$disk" \
            --output-format json $flags
    done </jobs
done
dmesg >$out/dmesg
tar -cf /dev/vda -C $out .
sync
echo "oracle: done"
poweroff -f
