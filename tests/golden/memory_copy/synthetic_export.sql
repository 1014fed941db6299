-- A small hand-written Nsight Systems export for the GPU memory and copy reports. None of the real
-- exports in ../shared/traces/nsys was captured with --cuda-memory-usage=true or holds
-- ProfilerStep#N NVTX ranges, so this one does (column lists are the real export's, the subset
-- tracedoc reads; schema of nsys 2024.5 / 3.13.2).
--
-- Process 100 (globalPid 100 << 24 = 1677721600, main thread 100: globalTid 1677721700) annotates
-- three steps: ProfilerStep#1 [1000, 2000) and #2 [2000, 3000) as push/pop ranges named through
-- StringIds, #3 [3000, 4500) as a start/end range with inline text. Not steps: a mark named
-- ProfilerStep#9 and a never-closed ProfilerStep#10 (no extent), the enclosing train_loop range.
-- Process 200 (globalPid 3355443200) has no steps: its reports cover the whole trace.
--
-- Memory events show every edge: events exactly on step bounds (an event at a step's start belongs
-- to it, one at its end to the next window), two events at one instant, a pinned host allocation
-- (left out: host memory), managed and static device memory (kept), rows out of time order, a second
-- device. Copies: overlapping copies on two streams, pageable and pinned host memory, a copy with no
-- duration, a copy across a step boundary, DtoD overlapping PtoP, a GPU whose host link is unknown
-- (a laptop part) and a process whose whole-trace window comes from a kernel.
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);
CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT, busLocation TEXT,
  isDiscrete INTEGER, l2CacheSize INTEGER, totalMemory INTEGER, memoryBandwidth INTEGER, clockRate INTEGER,
  smCount INTEGER, uuid TEXT, chipName TEXT, computeMajor INTEGER, computeMinor INTEGER);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,
  category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER,
  domainId INTEGER, uint64Value INTEGER, int64Value INTEGER, doubleValue REAL, uint32Value INTEGER,
  int32Value INTEGER, floatValue REAL, jsonTextId INTEGER, jsonText TEXT, binaryData TEXT);
CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS (start INTEGER NOT NULL, globalPid INTEGER, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, address INTEGER NOT NULL, pc INTEGER NOT NULL, bytes INTEGER NOT NULL,
  memKind INTEGER NOT NULL, memoryOperationType INTEGER NOT NULL, name TEXT, correlationId INTEGER,
  streamId INTEGER, localMemoryPoolAddress INTEGER, localMemoryPoolReleaseThreshold INTEGER,
  localMemoryPoolSize INTEGER, localMemoryPoolUtilizedSize INTEGER, importedMemoryPoolAddress INTEGER,
  importedMemoryPoolProcessId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,
  globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL, deprecatedSrcId INTEGER, srcKind INTEGER,
  dstKind INTEGER, srcDeviceId INTEGER, srcContextId INTEGER, dstDeviceId INTEGER, dstContextId INTEGER,
  migrationCause INTEGER, graphNodeId INTEGER, virtualAddress INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,
  globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER,
  launchType INTEGER, cacheConfig INTEGER, registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL,
  gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL,
  blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL,
  localMemoryPerThread INTEGER NOT NULL, localMemoryTotal INTEGER NOT NULL, gridId INTEGER NOT NULL,
  sharedMemoryExecuted INTEGER, graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER);

INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_VERSION', '2024.5.1.113'), ('EXPORT_SCHEMA_VERSION', '3.13.2'),
  ('EXPORT_SCHEMA_VERSION_MAJOR', '3'), ('EXPORT_SCHEMA_VERSION_MINOR', '13'), ('EXPORT_SCHEMA_VERSION_MICRO', '2');
INSERT INTO StringIds VALUES (1, 'ProfilerStep#1'), (2, 'ProfilerStep#2'), (3, 'train_loop'), (4, 'copy_kernel');
INSERT INTO PROCESSES VALUES (1677721600, 100, 'train.py'), (3355443200, 200, 'loader.py');
INSERT INTO TARGET_INFO_GPU VALUES
  (0, 0, 'NVIDIA A100-SXM4-80GB', '0000:07:00.0', 1, 41943040, 85899345920, 2039000000000, 1410000000, 108,
   'b5a0c6a1-0000-0000-0000-000000000000', 'GA100', 8, 0),
  (0, 1, 'NVIDIA GeForce RTX 4060 Laptop GPU', '0000:01:00.0', 1, 33554432, 8585216000, 256032000000, 2370000000,
   24, 'd9e1d642-0000-0000-0000-000000000000', 'AD107', 8, 9);

-- eventType 59 push/pop, 60 start/end, 34 mark.
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, textId) VALUES
  (900,  4800, 59, NULL,              1677721700, 3),     -- train_loop
  (1000, 2000, 59, NULL,              1677721700, 1),     -- ProfilerStep#1
  (2000, 3000, 59, NULL,              1677721700, 2),     -- ProfilerStep#2
  (3000, 4500, 60, 'ProfilerStep#3',  1677721700, NULL),
  (4600, NULL, 59, 'ProfilerStep#10', 1677721700, NULL),  -- never closed: no window
  (4700, NULL, 34, 'ProfilerStep#9',  1677721700, NULL);  -- a mark: no window

-- memKind: 0 pageable, 1 pinned, 2 device, 4 managed, 5 device static; operation 0 alloc, 1 free.
INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS (start, globalPid, deviceId, contextId, address, pc, bytes, memKind,
                                          memoryOperationType, correlationId, streamId) VALUES
  (5000, 1677721600, 0, 1, 7000, 0, 100,    2, 0, 40, 7),  -- out of time order
  (500,  1677721600, 0, 1, 1000, 0, 1000,   2, 0, 10, 7),
  (1000, 1677721600, 0, 1, 2000, 0, 4000,   2, 0, 11, 7),  -- at step 1's start: in step 1
  (1500, 1677721600, 0, 1, 3000, 0, 2000,   2, 0, 12, 7),
  (1500, 1677721600, 0, 1, 1000, 0, 1000,   2, 1, 13, 7),  -- same instant: after the row above
  (1800, 1677721600, 0, 1, 9000, 0, 999999, 1, 0, 14, 7),  -- pinned host memory: left out
  (2000, 1677721600, 0, 1, 3000, 0, 2000,   2, 1, 15, 7),  -- at step 1's end: in step 2
  (2500, 1677721600, 0, 1, 4000, 0, 8000,   4, 0, 16, 7),  -- managed
  (2600, 1677721600, 0, 1, 4000, 0, 8000,   4, 1, 17, 7),
  (3200, 1677721600, 0, 1, 5000, 0, 500,    5, 0, 18, 7),  -- device static
  (4500, 1677721600, 0, 1, 2000, 0, 4000,   2, 1, 19, 7),  -- at step 3's end: after it
  (1200, 1677721600, 1, 2, 6000, 0, 300,    2, 0, 20, 9),  -- device 1
  (3100, 1677721600, 1, 2, 6000, 0, 300,    2, 1, 21, 9),
  (100,  3355443200, 0, 3, 8000, 0, 50,     2, 0, 30, 11), -- process 200: no steps
  (300,  3355443200, 0, 3, 8100, 0, 70,     2, 0, 31, 11),
  (900,  3355443200, 0, 3, 8000, 0, 50,     2, 1, 32, 11),
  (950,  3355443200, 0, 3, 8200, 0, 64,     0, 0, 33, 11); -- pageable host memory: left out

-- copyKind: 1 HtoD, 2 DtoH, 8 DtoD, 10 PtoP; srcKind/dstKind as memKind above. Sizes are chosen so
-- that throughputs are plausible (1 B/ns = 1 GB/s).
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, globalPid, bytes,
                                        copyKind, srcKind, dstKind, srcDeviceId, dstDeviceId) VALUES
  (1100, 1300, 0, 1, 7,  50, 1677721600, 2000,  1,  0, 2, 0, 0),
  (1200, 1400, 0, 1, 8,  51, 1677721600, 1000,  1,  0, 2, 0, 0),   -- overlaps the copy above
  (2100, 2200, 0, 1, 7,  52, 1677721600, 3000,  1,  1, 2, 0, 0),
  (2300, 2300, 0, 1, 7,  53, 1677721600, 100,   1,  1, 2, 0, 0),   -- no duration
  (2400, 2500, 0, 1, 7,  54, 1677721600, 2500,  1,  1, 2, 0, 0),
  (2900, 3100, 0, 1, 7,  55, 1677721600, 400,   2,  2, 1, 0, 0),   -- across steps 2 and 3
  (3500, 3600, 0, 1, 7,  56, 1677721600, 10000, 8,  2, 2, 0, 0),
  (3550, 3650, 0, 1, 8,  57, 1677721600, 5000,  10, 2, 2, 0, 1),   -- overlaps the DtoD
  (1250, 1350, 1, 2, 9,  58, 1677721600, 500,   1,  1, 2, 1, 1),   -- device 1: unknown link
  (200,  400,  0, 3, 11, 60, 3355443200, 1000,  1,  0, 2, 0, 0);

INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
  (100, 1000, 0, 3, NULL, 11, 61, 3355443200, 4, 4, NULL, 0, 0, 32, 64, 1, 1, 128, 1, 1, 0, 0, 0, 0, 1, 0, NULL, 0);
