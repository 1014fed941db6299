-- CPU page faults on the managed buffers of the recording (one row per fault).

CREATE TABLE CUDA_UM_CPU_PAGE_FAULT_EVENTS (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    globalPid                   INTEGER   NOT NULL,                    -- Serialized GlobalId.
    address                     INTEGER   NOT NULL,                    -- Virtual address of the page that faulted.
    originalFaultPc             INTEGER,                               -- Program counter of the CPU instruction that caused the page fault.
    CpuInstruction              INTEGER   NOT NULL,                    -- REFERENCES StringIds(id) -- Function name
    module                      INTEGER   NOT NULL,                    -- REFERENCES StringIds(id) -- Module name
    unresolvedFaultPc           INTEGER                                -- True if the program counter was not resolved.
);
-- CPU page faults while the host initializes the managed buffers (init_data) and checks the
-- result (check_result). Not in address order, as recorded.
INSERT INTO CUDA_UM_CPU_PAGE_FAULT_EVENTS VALUES
    (451200310, 24817 << 24, 0x7f1c40a00000, 0x55d4c3a012f4, 3, 4, 0),
    (451204872, 24817 << 24, 0x7f1c40000000, 0x55d4c3a012f4, 3, 4, 0),
    (451209115, 24817 << 24, 0x7f1c40400000, 0x55d4c3a012f4, 3, 4, 0),
    (451213967, 24817 << 24, 0x7f1c40e00000, 0x55d4c3a01310, 3, 4, 0),
    (451218020, 24817 << 24, 0x7f1c40a00000, 0x55d4c3a01310, 3, 4, 0),
    (451222741, 24817 << 24, 0x7f1c40c00000, 0x55d4c3a01310, 3, 4, 0),
    (451227402, 24817 << 24, 0x7f1c40a00000, 0x55d4c3a01310, 3, 4, 0),
    (1902140551, 24817 << 24, 0x7f1c40000000, 0x55d4c3a01488, 5, 4, 0),
    (1902145804, 24817 << 24, 0x7f1c40600000, 0x55d4c3a01488, 5, 4, 0),
    (1902151220, 24817 << 24, 0x7f1c40400000, 0x55d4c3a01488, 5, 4, 0),
    (1902156790, 24817 << 24, 0x7f1c40000000, 0x55d4c3a0149c, 5, 4, 0),
    (1902161033, 24817 << 24, 0x7f1c40a00000, 0x55d4c3a0149c, 5, 4, 0);

