-- The tables every Nsight Systems SQLite export carries (metadata, strings, enum labels, process and
-- GPU info), for a small recording of one process (pid 24817) on one GPU. The event tables are in
-- the other .sql files. DDL in the shape `nsys export` (2024.5, schema 3.13.2) writes.

CREATE TABLE StringIds (
    -- Consolidation of repetitive string values.

    id                          INTEGER   NOT NULL   PRIMARY KEY,      -- ID reference value.
    value                       TEXT      NOT NULL                     -- String value.
);
CREATE TABLE META_DATA_EXPORT (
    -- information about nsys export process

    name                        TEXT      NOT NULL,                    -- Name of meta-data record
    value                       TEXT                                   -- Value of meta-data record
);
CREATE TABLE TARGET_INFO_SESSION_START_TIME (
    utcEpochNs                  INTEGER,                               -- UTC Epoch timestamp at start of the capture (ns).
    utcTime                     TEXT,                                  -- Start of the capture in UTC.
    localTime                   TEXT                                   -- Start of the capture in local time of target.
);
CREATE TABLE ANALYSIS_DETAILS (
    -- Details about the analysis session.

    globalVid                   INTEGER   NOT NULL,                    -- Serialized GlobalId.
    duration                    INTEGER   NOT NULL,                    -- The total time span of the entire trace (ns).
    startTime                   INTEGER   NOT NULL,                    -- Trace start timestamp in nanoseconds.
    stopTime                    INTEGER   NOT NULL                     -- Trace stop timestamp in nanoseconds.
);
CREATE TABLE PROCESSES (
    -- Names and identifiers of processes captured in the report.

    globalPid                   INTEGER,                               -- Serialized GlobalId.
    pid                         INTEGER,                               -- The process ID.
    name                        TEXT                                   -- The process name.
);
CREATE TABLE ThreadNames (
    nameId                      INTEGER   NOT NULL,                    -- REFERENCES StringIds(id) -- Thread name
    priority                    INTEGER,                               -- Priority of the thread.
    globalTid                   INTEGER                                -- Serialized GlobalId.
);
CREATE TABLE TARGET_INFO_GPU (
    vmId                        INTEGER   NOT NULL,                    -- Serialized GlobalId.
    id                          INTEGER   NOT NULL,                    -- Device ID.
    name                        TEXT,                                  -- Device name.
    busLocation                 TEXT,                                  -- PCI bus location.
    isDiscrete                  INTEGER,                               -- True if discrete, false if integrated.
    l2CacheSize                 INTEGER,                               -- Size of L2 cache (B).
    totalMemory                 INTEGER,                               -- Total amount of memory on the device (B).
    memoryBandwidth             INTEGER,                               -- Amount of memory transferred (B).
    clockRate                   INTEGER,                               -- Clock frequency (Hz).
    smCount                     INTEGER,                               -- Number of multiprocessors on the device.
    uuid                        TEXT,                                  -- Device UUID.
    chipName                    TEXT,                                  -- Chip name.
    computeMajor                INTEGER,                               -- Major compute capability version number.
    computeMinor                INTEGER                                -- Minor compute capability version number.
);
CREATE TABLE ENUM_NSYS_EVENT_CLASS (
    -- Nsys event class labels

    id                          INTEGER   NOT NULL   PRIMARY KEY,      -- Enum numerical value.
    name                        TEXT,                                  -- Enum symbol name.
    label                       TEXT                                   -- Enum human name.
);
CREATE TABLE ENUM_CUDA_MEMCPY_OPER (
    -- CUDA memcpy operation labels

    id                          INTEGER   NOT NULL   PRIMARY KEY,      -- Enum numerical value.
    name                        TEXT,                                  -- Enum symbol name.
    label                       TEXT                                   -- Enum human name.
);
CREATE TABLE ENUM_CUDA_MEM_KIND (
    -- CUDA memory kind labels

    id                          INTEGER   NOT NULL   PRIMARY KEY,      -- Enum numerical value.
    name                        TEXT,                                  -- Enum symbol name.
    label                       TEXT                                   -- Enum human name.
);
CREATE TABLE ENUM_CUDA_UNIF_MEM_MIGRATION (
    -- CUDA unified memory migration cause labels

    id                          INTEGER   NOT NULL   PRIMARY KEY,      -- Enum numerical value.
    name                        TEXT,                                  -- Enum symbol name.
    label                       TEXT                                   -- Enum human name.
);
CREATE TABLE ENUM_CUDA_UNIF_MEM_ACCESS_TYPE (
    -- CUDA unified memory access type labels

    id                          INTEGER   NOT NULL   PRIMARY KEY,      -- Enum numerical value.
    name                        TEXT,                                  -- Enum symbol name.
    label                       TEXT                                   -- Enum human name.
);
CREATE TABLE ENUM_OPENMP_EVENT_KIND (
    -- OpenMP event kind labels

    id                          INTEGER   NOT NULL   PRIMARY KEY,      -- Enum numerical value.
    name                        TEXT,                                  -- Enum symbol name.
    label                       TEXT                                   -- Enum human name.
);

INSERT INTO META_DATA_EXPORT VALUES
    ('EXPORT_PRODUCT_NAME', 'NVIDIA Nsight Systems'),
    ('EXPORT_PRODUCT_VERSION', '2024.5.1.113'),
    ('EXPORT_PRODUCT_DATE', '2024.5'),
    ('EXPORT_SCHEMA_VERSION', '3.13.2'),
    ('EXPORT_SCHEMA_VERSION_MAJOR', '3'),
    ('EXPORT_SCHEMA_VERSION_MINOR', '13'),
    ('EXPORT_SCHEMA_VERSION_MICRO', '2'),
    ('EXPORT_PLATFORM', 'linux-desktop'),
    ('EXPORT_ARCH', 'x64'),
    ('EXPORT_PARAM_EXPORT_TYPE', 'SQLite'),
    ('EXPORT_PARAM_INPUT_FILE', 'um_openmp.nsys-rep'),
    ('EXPORT_PARAM_OUTPUT_FILE', 'um_openmp.sqlite'),
    ('EXPORT_PARAM_LAZY', 'true'),
    ('EXPORT_PARAM_TIME_NORMALIZE', 'false'),
    ('EXPORT_PARAM_TIME_SHIFT', '0'),
    ('EXPORT_PARAM_TABLES_TO_EXPORT', ''),
    ('EXPORT_PARAM_TIMES_TO_EXPORT', ''),
    ('EXPORT_CONFIG_TIME_SHIFT', '0');

INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES
    (1740145318345187988, '2025-02-21T13:41:58', '2025-02-21T14:41:58');
INSERT INTO ANALYSIS_DETAILS VALUES (0, 2600000000, 0, 2600000000);

-- One process; its main thread and three OpenMP worker threads.
INSERT INTO PROCESSES VALUES (24817 << 24, 24817, './um_openmp_demo');
INSERT INTO StringIds VALUES
    (1, 'um_openmp_demo'),
    (2, 'cuda-EvtHandlr'),
    (3, 'init_data(float*, int)'),
    (4, '/home/dev/um_openmp_demo/build/um_openmp_demo'),
    (5, 'check_result(const float*, int)'),
    (6, 'ompt_thread_initial'),
    (7, 'ompt_thread_worker'),
    (8, 'ompt_parallel'),
    (9, 'ompt_work_loop'),
    (10, 'ompt_work_single_executor'),
    (11, 'ompt_sync_region_barrier_implicit'),
    (12, 'ompt_sync_region_barrier_explicit'),
    (13, 'ompt_task_implicit'),
    (14, 'ompt_task_explicit'),
    (15, 'ompt_mutex_lock'),
    (16, 'ompt_mutex_critical');
INSERT INTO ThreadNames VALUES
    (1, 120, (24817 << 24) | 24817),
    (2, 120, (24817 << 24) | 24822),
    (1, 120, (24817 << 24) | 24823),
    (1, 120, (24817 << 24) | 24824),
    (1, 120, (24817 << 24) | 24825);

INSERT INTO TARGET_INFO_GPU VALUES
    (0, 0, 'NVIDIA GeForce RTX 3080', '0000:01:00.0', 1, 5242880, 10485760000, 760320000000,
     1710000000, 68, '5f2b1c6e-9a3d-4e8f-b1a7-2c4d6e8f0a1b', 'GA102', 8, 6);

INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES
    (0, 'TRACE_PROCESS_EVENT_CUDA_RUNTIME', 'CUDA runtime'),
    (1, 'TRACE_PROCESS_EVENT_CUDA_DRIVER', 'CUDA driver'),
    (27, 'TRACE_PROCESS_EVENT_OS_RUNTIME', 'OSRT runtime'),
    (78, 'TRACE_PROCESS_EVENT_OPENMP', 'OpenMP'),
    (79, 'TRACE_PROCESS_EVENT_OPENMP_START', 'OpenMP start'),
    (80, 'TRACE_PROCESS_EVENT_OPENMP_FINISH', 'OpenMP finish');
INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES
    (0, 'CUDA_MEMCPY_KIND_UNKNOWN', 'Unknown'),
    (1, 'CUDA_MEMCPY_KIND_HTOD', 'Host-to-Device'),
    (2, 'CUDA_MEMCPY_KIND_DTOH', 'Device-to-Host'),
    (3, 'CUDA_MEMCPY_KIND_HTOA', 'Host-to-Array'),
    (4, 'CUDA_MEMCPY_KIND_ATOH', 'Array-to-Host'),
    (5, 'CUDA_MEMCPY_KIND_ATOA', 'Array-to-Array'),
    (6, 'CUDA_MEMCPY_KIND_ATOD', 'Array-to-Device'),
    (7, 'CUDA_MEMCPY_KIND_DTOA', 'Device-to-Array'),
    (8, 'CUDA_MEMCPY_KIND_DTOD', 'Device-to-Device'),
    (9, 'CUDA_MEMCPY_KIND_HTOH', 'Host-to-Host'),
    (10, 'CUDA_MEMCPY_KIND_PTOP', 'Peer-to-Peer'),
    (11, 'CUDA_MEMCPY_KIND_UVM_HTOD', 'Unified Host-to-Device'),
    (12, 'CUDA_MEMCPY_KIND_UVM_DTOH', 'Unified Device-to-Host'),
    (13, 'CUDA_MEMCPY_KIND_UVM_DTOD', 'Unified Device-to-Device');
INSERT INTO ENUM_CUDA_MEM_KIND VALUES
    (0, 'CUDA_MEMOPR_MEMORY_KIND_PAGEABLE', 'Pageable'),
    (1, 'CUDA_MEMOPR_MEMORY_KIND_PINNED', 'Pinned'),
    (2, 'CUDA_MEMOPR_MEMORY_KIND_DEVICE', 'Device'),
    (3, 'CUDA_MEMOPR_MEMORY_KIND_ARRAY', 'Array'),
    (4, 'CUDA_MEMOPR_MEMORY_KIND_MANAGED', 'Managed'),
    (5, 'CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC', 'Device Static'),
    (6, 'CUDA_MEMOPR_MEMORY_KIND_MANAGED_STATIC', 'Managed Static'),
    (7, 'CUDA_MEMOPR_MEMORY_KIND_UNKNOWN', 'Unknown');
INSERT INTO ENUM_CUDA_UNIF_MEM_MIGRATION VALUES
    (0, 'CUDA_UNIFIED_MEMORY_MIGRATION_CAUSE_UNKNOWN', 'Unknown'),
    (1, 'CUDA_UNIFIED_MEMORY_MIGRATION_CAUSE_USER', 'User prefetch'),
    (2, 'CUDA_UNIFIED_MEMORY_MIGRATION_CAUSE_COHERENCE', 'Page fault'),
    (3, 'CUDA_UNIFIED_MEMORY_MIGRATION_CAUSE_PREFETCH', 'Speculative prefecth'),
    (4, 'CUDA_UNIFIED_MEMORY_MIGRATION_CAUSE_EVICTION', 'Eviction'),
    (5, 'CUDA_UNIFIED_MEMORY_MIGRATION_CAUSE_ACCESS_COUNTERS', 'Access counters');
INSERT INTO ENUM_CUDA_UNIF_MEM_ACCESS_TYPE VALUES
    (0, 'CUDA_UNIFIED_MEMORY_ACCESS_TYPE_UNKNOWN', 'Unknown'),
    (1, 'CUDA_UNIFIED_MEMORY_ACCESS_TYPE_READ', 'Read'),
    (2, 'CUDA_UNIFIED_MEMORY_ACCESS_TYPE_WRITE', 'Write'),
    (3, 'CUDA_UNIFIED_MEMORY_ACCESS_TYPE_ATOMIC', 'Atomic'),
    (4, 'CUDA_UNIFIED_MEMORY_ACCESS_TYPE_PREFETCH', 'Prefetch');
INSERT INTO ENUM_OPENMP_EVENT_KIND VALUES
    (0, 'OPENMP_EVENT_KIND_INVALID', 'Invalid'),
    (1, 'OPENMP_EVENT_KIND_THREAD_BEGIN', 'Thread begin'),
    (2, 'OPENMP_EVENT_KIND_THREAD_END', 'Thread end'),
    (3, 'OPENMP_EVENT_KIND_PARALLEL_BEGIN', 'Parallel begin'),
    (4, 'OPENMP_EVENT_KIND_PARALLEL_END', 'Parallel End'),
    (5, 'OPENMP_EVENT_KIND_SYNC_REGION_WAIT_BEGIN', 'Sync region wait begin'),
    (6, 'OPENMP_EVENT_KIND_SYNC_REGION_WAIT_END', 'Sync region wait end'),
    (7, 'OPENMP_EVENT_KIND_SYNC_REGION_BEGIN', 'Sync region begin'),
    (8, 'OPENMP_EVENT_KIND_SYNC_REGION_END', 'Sync region end'),
    (9, 'OPENMP_EVENT_KIND_TASK_BEGIN', 'Task begin'),
    (10, 'OPENMP_EVENT_KIND_TASK_END', 'Task end'),
    (11, 'OPENMP_EVENT_KIND_MASTER_BEGIN', 'Master begin'),
    (12, 'OPENMP_EVENT_KIND_MASTER_END', 'Master end'),
    (13, 'OPENMP_EVENT_KIND_REDUCTION_BEGIN', 'Reduction begin'),
    (14, 'OPENMP_EVENT_KIND_REDUCTION_END', 'Reduction end'),
    (15, 'OPENMP_EVENT_KIND_TASK_CREATE', 'Task create'),
    (16, 'OPENMP_EVENT_KIND_TASK_SCHEDULE', 'Task schedule'),
    (17, 'OPENMP_EVENT_KIND_CANCEL', 'Cancel'),
    (18, 'OPENMP_EVENT_KIND_MUTEX_ACQUIRE', 'Mutex acquire'),
    (19, 'OPENMP_EVENT_KIND_MUTEX_ACQUIRED', 'Mutex acquired'),
    (20, 'OPENMP_EVENT_KIND_MUTEX_RELEASED', 'Mutex released'),
    (21, 'OPENMP_EVENT_KIND_LOCK_INIT', 'Lock init'),
    (22, 'OPENMP_EVENT_KIND_LOCK_DESTROY', 'Lock destroy'),
    (23, 'OPENMP_EVENT_KIND_WORKSHARE_BEGIN', 'Workshare begin'),
    (24, 'OPENMP_EVENT_KIND_WORKSHARE_END', 'Workshare end'),
    (25, 'OPENMP_EVENT_KIND_DISPATCH', 'Dispatch'),
    (26, 'OPENMP_EVENT_KIND_FLUSH', 'Flush'),
    (27, 'OPENMP_EVENT_KIND_THREAD', 'Thread'),
    (28, 'OPENMP_EVENT_KIND_PARALLEL', 'Parallel'),
    (29, 'OPENMP_EVENT_KIND_SYNC_REGION_WAIT', 'Sync region wait'),
    (30, 'OPENMP_EVENT_KIND_SYNC_REGION', 'Sync region'),
    (31, 'OPENMP_EVENT_KIND_TASK', 'Task'),
    (32, 'OPENMP_EVENT_KIND_MASTER', 'Master'),
    (33, 'OPENMP_EVENT_KIND_REDUCTION', 'Reduction'),
    (34, 'OPENMP_EVENT_KIND_MUTEX_WAIT', 'Mutex wait'),
    (35, 'OPENMP_EVENT_KIND_CRITICAL_SECTION', 'Critical section'),
    (36, 'OPENMP_EVENT_KIND_WORKSHARE', 'Workshare');
