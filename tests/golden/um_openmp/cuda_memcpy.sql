-- CUDA memory copies of the recording: two ordinary copies and the Unified Memory migrations that
-- CUPTI reports as memcpy rows (copyKind 11 Unified Host-to-Device, 12 Unified Device-to-Host,
-- 13 Unified Device-to-Device, with the base address of the migrated pages). Addresses and
-- durations are chosen so that um_sum, with the page faults of um_cpu_page_faults.sql and
-- um_gpu_page_faults.sql, shows every case: faults and migrations on one address, faults only,
-- migrations only, equal throughputs (the order of ties), a zero-length migration (no throughput)
-- and more than 10 rows (the default row limit).

CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER   NOT NULL,                    -- Event end timestamp (ns).
    deviceId                    INTEGER   NOT NULL,                    -- Device ID.
    contextId                   INTEGER   NOT NULL,                    -- Context ID.
    greenContextId              INTEGER,                               -- Green context ID.
    streamId                    INTEGER   NOT NULL,                    -- Stream ID.
    correlationId               INTEGER,                               -- REFERENCES CUPTI_ACTIVITY_KIND_RUNTIME(correlationId)
    globalPid                   INTEGER,                               -- Serialized GlobalId.
    bytes                       INTEGER   NOT NULL,                    -- Number of bytes transferred (B).
    copyKind                    INTEGER   NOT NULL,                    -- REFERENCES ENUM_CUDA_MEMCPY_OPER(id)
    deprecatedSrcId             INTEGER,                               -- Deprecated, use srcDeviceId instead.
    srcKind                     INTEGER,                               -- REFERENCES ENUM_CUDA_MEM_KIND(id)
    dstKind                     INTEGER,                               -- REFERENCES ENUM_CUDA_MEM_KIND(id)
    srcDeviceId                 INTEGER,                               -- Source device ID.
    srcContextId                INTEGER,                               -- Source context ID.
    dstDeviceId                 INTEGER,                               -- Destination device ID.
    dstContextId                INTEGER,                               -- Destination context ID.
    migrationCause              INTEGER,                               -- REFERENCES ENUM_CUDA_UNIF_MEM_MIGRATION(id)
    graphNodeId                 INTEGER,                               -- REFERENCES CUDA_GRAPH_NODE_EVENTS(graphNodeId)
    virtualAddress              INTEGER                                -- Virtual base address of the page/s being transferred.
);
-- Ordinary copies (no virtual address): not part of um_sum.
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY
    (start, end, deviceId, contextId, streamId, correlationId, globalPid, bytes, copyKind,
     srcKind, dstKind, srcDeviceId, dstDeviceId, migrationCause, virtualAddress)
VALUES
    (402113520, 402794880, 0, 1, 7, 118, 24817 << 24, 8388608, 1, 1, 2, NULL, 0, NULL, NULL),
    (1904551230, 1905237418, 0, 1, 7, 164, 24817 << 24, 8388608, 2, 2, 1, 0, NULL, NULL, NULL);

-- Unified Memory migrations.
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY
    (start, end, deviceId, contextId, streamId, correlationId, globalPid, bytes, copyKind,
     srcKind, dstKind, srcDeviceId, dstDeviceId, migrationCause, virtualAddress)
VALUES
    -- user prefetch of the second buffer before the first kernel
    (498010220, 498180220, 0, 1, 0, 0, 24817 << 24, 2097152, 11, NULL, NULL, NULL, 0, 1, 0x7f1c41200000),
    (498182614, 498354614, 0, 1, 0, 0, 24817 << 24, 2097152, 11, NULL, NULL, NULL, 0, 1, 0x7f1c41200000),
    (498357002, 498532002, 0, 1, 0, 0, 24817 << 24, 2097152, 11, NULL, NULL, NULL, 0, 1, 0x7f1c41200000),
    -- migrations caused by the GPU page faults
    (520137012, 520142212, 0, 1, 0, 0, 24817 << 24, 65536, 11, NULL, NULL, NULL, 0, 2, 0x7f1c40000000),
    (520143500, 520323500, 0, 1, 0, 0, 24817 << 24, 2097152, 11, NULL, NULL, NULL, 0, 2, 0x7f1c40200000),
    (520144117, 520239117, 0, 1, 0, 0, 24817 << 24, 1048576, 11, NULL, NULL, NULL, 0, 2, 0x7f1c40400000),
    (520150930, 520155730, 0, 1, 0, 0, 24817 << 24, 65536, 11, NULL, NULL, NULL, 0, 2, 0x7f1c40000000),
    (520240377, 520337377, 0, 1, 0, 0, 24817 << 24, 1048576, 11, NULL, NULL, NULL, 0, 2, 0x7f1c40400000),
    (520245880, 520247980, 0, 1, 0, 0, 24817 << 24, 4096, 11, NULL, NULL, NULL, 0, 2, 0x7f1c40e00000),
    (520251004, 520256604, 0, 1, 0, 0, 24817 << 24, 65536, 11, NULL, NULL, NULL, 0, 3, 0x7f1c41000000),
    (520258215, 520265215, 0, 1, 0, 0, 24817 << 24, 65536, 11, NULL, NULL, NULL, 0, 3, 0x7f1c41600000),
    (1311890102, 1311896202, 0, 1, 0, 0, 24817 << 24, 65536, 11, NULL, NULL, NULL, 0, 2, 0x7f1c40000000),
    -- a copy between two pages on the device: not a host migration
    (1312004410, 1312009950, 0, 1, 0, 0, 24817 << 24, 65536, 13, NULL, NULL, 0, 0, 2, 0x7f1c41200000),
    -- eviction of the prefetched buffer under memory pressure
    (1650221084, 1650411084, 0, 1, 0, 0, 24817 << 24, 2097152, 12, NULL, NULL, 0, NULL, 4, 0x7f1c41400000),
    (1650413390, 1650613390, 0, 1, 0, 0, 24817 << 24, 2097152, 12, NULL, NULL, 0, NULL, 4, 0x7f1c41400000),
    -- migrations back to the host caused by the CPU page faults of check_result
    (1902141030, 1902146930, 0, 1, 0, 0, 24817 << 24, 65536, 12, NULL, NULL, 0, NULL, 2, 0x7f1c40000000),
    (1902146212, 1902148312, 0, 1, 0, 0, 24817 << 24, 4096, 12, NULL, NULL, 0, NULL, 2, 0x7f1c40600000),
    (1902149877, 1902151977, 0, 1, 0, 0, 24817 << 24, 4096, 12, NULL, NULL, 0, NULL, 2, 0x7f1c3fc00000),
    (1902152461, 1902154561, 0, 1, 0, 0, 24817 << 24, 4096, 12, NULL, NULL, 0, NULL, 2, 0x7f1c3f000000),
    (1902155320, 1902160720, 0, 1, 0, 0, 24817 << 24, 65536, 12, NULL, NULL, 0, NULL, 3, 0x7f1c41000000),
    (1902157270, 1902163570, 0, 1, 0, 0, 24817 << 24, 65536, 12, NULL, NULL, 0, NULL, 2, 0x7f1c40000000),
    -- a migration the counters recorded with no duration
    (1902164018, 1902164018, 0, 1, 0, 0, 24817 << 24, 4096, 12, NULL, NULL, 0, NULL, 2, 0x7f1c41800000);
