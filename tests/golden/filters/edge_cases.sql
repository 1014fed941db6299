-- A tiny hand-written Nsight Systems export for the filter edge cases the real exports lack:
-- two processes (pid 100 with main thread 100 and worker 101; pid 200), start/end ranges, a range
-- on a worker thread, named domains (same id, different names per process), never-closed ranges,
-- marks, names containing '/' and '@', and events exactly on the window bounds (1000 and 2000).
-- globalTid = pid << 24 | tid:  100/100 = 1677721700, 100/101 = 1677721701, 200/200 = 3355443400.
-- globalPid = pid << 24:        100 = 1677721600, 200 = 3355443200.
-- Column lists follow the real export's (the subset nsys stats reads).
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,
  globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER,
  launchType INTEGER, cacheConfig INTEGER, registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL,
  gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL,
  blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL,
  localMemoryPerThread INTEGER NOT NULL, localMemoryTotal INTEGER NOT NULL, gridId INTEGER NOT NULL,
  sharedMemoryExecuted INTEGER, graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
  globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,
  category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER,
  domainId INTEGER, uint64Value INTEGER, int64Value INTEGER, doubleValue REAL, uint32Value INTEGER,
  int32Value INTEGER, floatValue REAL, jsonTextId INTEGER, jsonText TEXT, binaryData TEXT);
CREATE TABLE OSRT_API (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL, globalTid INTEGER,
  nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, nestingLevel INTEGER, callchainId INTEGER NOT NULL,
  argumentsId INTEGER NOT NULL);

INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_VERSION', '2024.5.1.113'), ('EXPORT_SCHEMA_VERSION', '3.13.2'),
  ('EXPORT_SCHEMA_VERSION_MAJOR', '3'), ('EXPORT_SCHEMA_VERSION_MINOR', '13'), ('EXPORT_SCHEMA_VERSION_MICRO', '2');

INSERT INTO StringIds VALUES
  (1, 'cudaLaunchKernel_v7000'), (2, 'cudaMemcpyAsync_v3020'), (3, 'cudaStreamSynchronize_v3020'),
  (4, 'cudaEventRecord_v3020'), (5, 'cudaMalloc_v3020'), (6, 'cudaFree_v3020'),
  (10, 'gemm_kernel'), (11, 'relu_kernel'), (12, 'reduce_kernel'), (13, 'copy_kernel'),
  (20, 'read'), (21, 'poll'), (22, 'pthread_mutex_lock'), (23, 'ioctl'),
  (30, 'step'), (31, 'epoch');

-- NVTX. eventType 75 = domain creation (name in `text`), 59 = push/pop, 60 = start/end, 34 = mark.
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, textId, domainId) VALUES
  (5,    NULL, 75, 'Train',         1677721700, NULL, 1),
  (6,    NULL, 75, 'Other',         3355443400, NULL, 1),
  (1000, 2000, 59, NULL,            1677721701, 30,   1),    -- step@Train #0, worker thread
  (3000, 4000, 59, NULL,            1677721700, 30,   1),    -- step@Train #1, main thread
  (1100, 1900, 59, NULL,            3355443400, 30,   1),    -- step@Other, other process
  (500,  5000, 60, NULL,            1677721700, 31,   NULL), -- epoch: start/end on the main thread
  (1500, 2500, 60, 'io',            1677721701, NULL, NULL), -- start/end on the worker thread
  (1200, 1800, 59, 'fwd/bwd',       1677721700, NULL, 0),
  (1300, 1700, 59, 'layer/2',       1677721700, NULL, 0),
  (1400, 1600, 59, 'a@b',           1677721700, NULL, 0),
  (1250, 1350, 59, 'fwd',           1677721700, NULL, 0),
  (1450, 1550, 59, 'fwd',           1677721700, NULL, 0),
  (1450, 1460, 59, 'fwd',           3355443400, NULL, 0),    -- same start as fwd #2: table order breaks the tie
  (4500, NULL, 59, 'never_closed',  1677721700, NULL, 0),
  (1990, NULL, 59, 'open_in',       1677721700, NULL, 0),
  (900,  NULL, 59, 'open_before',   1677721700, NULL, 0),
  (1000, NULL, 34, 'mark_at_start', 1677721700, NULL, 0),
  (2000, NULL, 34, 'mark_at_end',   1677721700, NULL, 0),
  (1500, NULL, 34, 'mark_inside',   1677721701, NULL, 0),
  (1999, 2001, 59, 'late',          1677721701, NULL, 0),
  (0,    999,  59, 'early',         1677721701, NULL, 0),
  (2000, 2000, 59, 'empty_at_end',  1677721701, NULL, 0);

-- CUDA API calls: (start, end, class, globalTid, correlation, name, return, callchain).
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES
  (0,    999,  0, 1677721700, 1,  5, 0, NULL),  -- before the window
  (900,  1000, 0, 1677721700, 2,  1, 0, NULL),  -- ends at the window start: kept
  (500,  2500, 0, 1677721700, 3,  3, 0, NULL),  -- spans the window
  (1999, 2000, 0, 1677721700, 4,  1, 0, NULL),  -- ends at the window end
  (2000, 2100, 0, 1677721700, 5,  1, 0, NULL),  -- starts at the window end: dropped
  (2000, 2000, 0, 1677721700, 6,  4, 0, NULL),  -- empty, at the window end: dropped
  (1000, 1000, 0, 1677721700, 7,  4, 0, NULL),  -- empty, at the window start: kept
  (3100, 3200, 0, 1677721700, 8,  1, 0, NULL),
  (1010, 1050, 0, 1677721701, 9,  2, 0, NULL),  -- worker thread
  (1600, 1900, 0, 1677721701, 10, 3, 0, NULL),
  (2400, 2600, 0, 1677721701, 11, 1, 0, NULL),
  (1100, 1200, 0, 3355443400, 1,  1, 0, NULL),  -- other process (same correlation ids)
  (1300, 1350, 0, 3355443400, 2,  2, 0, NULL),
  (3500, 3600, 0, 3355443400, 3,  6, 0, NULL);

-- Kernels: (start, end, device, context, green, stream, correlation, globalPid, names..., launch config).
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
  (950,  1050, 0, 1, NULL, 7, 2,  1677721600, 10, 10, NULL, 0, 0, 32, 64, 1, 1, 128, 1, 1, 0, 0, 0, 0, 1, 0, NULL, 0),
  (1500, 1600, 0, 1, NULL, 7, 4,  1677721600, 11, 11, NULL, 0, 0, 16, 32, 1, 1, 256, 1, 1, 0, 0, 0, 0, 2, 0, NULL, 0),
  (2000, 2200, 0, 1, NULL, 7, 5,  1677721600, 12, 12, NULL, 0, 0, 24, 8,  1, 1, 64,  1, 1, 0, 0, 0, 0, 3, 0, NULL, 0),
  (3150, 3400, 0, 1, NULL, 7, 8,  1677721600, 10, 10, NULL, 0, 0, 32, 64, 1, 1, 128, 1, 1, 0, 0, 0, 0, 4, 0, NULL, 0),
  (800,  2300, 0, 1, NULL, 8, 11, 1677721600, 13, 13, NULL, 0, 0, 8,  4,  1, 1, 32,  1, 1, 0, 0, 0, 0, 5, 0, NULL, 0),
  (1150, 1250, 1, 2, NULL, 7, 1,  3355443200, 10, 10, NULL, 0, 0, 32, 64, 1, 1, 128, 1, 1, 0, 0, 0, 0, 6, 0, NULL, 0),
  (1400, 1450, 1, 2, NULL, 7, 2,  3355443200, 11, 11, NULL, 0, 0, 16, 32, 1, 1, 256, 1, 1, 0, 0, 0, 0, 7, 0, NULL, 0);

-- OS runtime calls (eventClass 27).
INSERT INTO OSRT_API VALUES
  (100,  1500, 27, 1677721700, 21, 0, 0, 0, 0),
  (1700, 1800, 27, 1677721700, 22, 0, 0, 0, 0),
  (1000, 1400, 27, 1677721701, 20, 0, 0, 0, 0),
  (1450, 1460, 27, 1677721701, 22, 0, 0, 0, 0),
  (2600, 2700, 27, 1677721701, 20, 0, 0, 0, 0),
  (1200, 1300, 27, 3355443400, 23, 0, 0, 0, 0),
  (3300, 3400, 27, 3355443400, 21, 0, 0, 0, 0);
