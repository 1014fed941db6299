-- Values real exports rarely hold, added to the Unified Memory tables to pin down how um_sum treats
-- them: migrations without a virtual address, an address with the top bit set (negative as an
-- SQLite integer), address 0, a migration too slow for an integer throughput (1e9 / duration is 0)
-- and one so large that bytes * (1e9 / duration) leaves the 64-bit integer range.
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY
    (start, end, deviceId, contextId, streamId, correlationId, globalPid, bytes, copyKind,
     srcKind, dstKind, srcDeviceId, dstDeviceId, migrationCause, virtualAddress)
VALUES
    (2100000000, 2100004000, 0, 1, 0, 0, 24817 << 24, 65536, 11, NULL, NULL, NULL, 0, 2, NULL),
    (2100010000, 2100013000, 0, 1, 0, 0, 24817 << 24, 65536, 11, NULL, NULL, NULL, 0, 2, NULL),
    (2100020000, 2100022500, 0, 1, 0, 0, 24817 << 24, 4096, 12, NULL, NULL, 0, NULL, 2, NULL),
    (2100030000, 2100033000, 0, 1, 0, 0, 24817 << 24, 65536, 12, NULL, NULL, 0, NULL, 2, -4096),
    (2100040000, 2100040001, 0, 1, 0, 0, 24817 << 24, 17179869184, 11, NULL, NULL, NULL, 0, 1, 0x7f1c80000000),
    (2100050000, 3600050000, 0, 1, 0, 0, 24817 << 24, 4096, 12, NULL, NULL, 0, NULL, 4, 0x7f1c41a00000);
INSERT INTO CUDA_UM_CPU_PAGE_FAULT_EVENTS VALUES
    (2100060000, 24817 << 24, -4096, 0x55d4c3a01488, 5, 4, 0),
    (2100061000, 24817 << 24, 0, 0x55d4c3a01488, 5, 4, 1);
INSERT INTO CUDA_UM_GPU_PAGE_FAULT_EVENTS VALUES
    (2100070000, 2100071000, 24817 << 24, 0, 0, 2, 1),
    (2100072000, 2100073000, 24817 << 24, 0, 0x7f1c41a00000, 1, 1);
