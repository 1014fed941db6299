-- GPU page faults on the managed buffers of the recording (one row per faulting page and interval).

CREATE TABLE CUDA_UM_GPU_PAGE_FAULT_EVENTS (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER   NOT NULL,                    -- Event end timestamp (ns).
    globalPid                   INTEGER   NOT NULL,                    -- Serialized GlobalId.
    deviceId                    INTEGER   NOT NULL,                    -- Device ID.
    address                     INTEGER   NOT NULL,                    -- Virtual address of the page that faulted.
    numberOfPageFaults          INTEGER   NOT NULL,                    -- Number of page faults for the same page.
    faultAccessType             INTEGER   NOT NULL                     -- REFERENCES ENUM_CUDA_UNIF_MEM_ACCESS_TYPE(id)
);

-- GPU page-fault groups raised by the kernels (several faults on one page per row).
INSERT INTO CUDA_UM_GPU_PAGE_FAULT_EVENTS VALUES
    (520114388, 520136901, 24817 << 24, 0, 0x7f1c40000000, 12, 1),
    (520118240, 520131175, 24817 << 24, 0, 0x7f1c40200000, 8, 1),
    (520121975, 520140311, 24817 << 24, 0, 0x7f1c40400000, 6, 1),
    (520126618, 520139054, 24817 << 24, 0, 0x7f1c3fe00000, 2, 1),
    (520130211, 520142788, 24817 << 24, 0, 0x7f1c40200000, 8, 2),
    (520141022, 520150637, 24817 << 24, 0, 0x7f1c3fc00000, 1, 1),
    (520152470, 520161934, 24817 << 24, 0, 0x7f1c40800000, 1, 2),
    (520158816, 520170120, 24817 << 24, 0, 0x7f1c40c00000, 3, 2),
    (520166051, 520178442, 24817 << 24, 0, 0x7f1c40200000, 4, 2),
    (520171390, 520180016, 24817 << 24, 0, 0x7f1c3fc00000, 1, 2),
    (1311873260, 1311889525, 24817 << 24, 0, 0x7f1c40000000, 5, 2);

