-- A hand-written Nsight Systems export for the host_waits rule: no real export with a GPU has OS
-- waits of the launching thread while the GPU idles (their waits fall before the first kernel).
-- Process 100: main thread 100 launches three kernels (GPU busy 1-2, 12-13 and 20-21 ms, so the
-- basis is the 20 ms span); worker thread 101 launches nothing. Times in ns.
-- globalTid = pid << 24 | tid:  100/100 = 1677721700, 100/101 = 1677721701; globalPid 100 = 1677721600.
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
CREATE TABLE OSRT_API (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL, globalTid INTEGER,
  nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, nestingLevel INTEGER, callchainId INTEGER NOT NULL,
  argumentsId INTEGER NOT NULL);

INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_VERSION', '2024.5.1.113'), ('EXPORT_SCHEMA_VERSION', '3.13.2'),
  ('EXPORT_SCHEMA_VERSION_MAJOR', '3'), ('EXPORT_SCHEMA_VERSION_MINOR', '13'), ('EXPORT_SCHEMA_VERSION_MICRO', '2');
INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel_v7000'), (10, 'gemm_kernel'),
  (20, 'pthread_cond_timedwait'), (21, 'poll'), (22, 'nanosleep'), (23, 'futex'), (24, 'sem_wait'), (25, 'ioctl'),
  (26, 'pthread_mutex_lock');

INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
  (1000000, 2000000, 0, 1, NULL, 7, 1, 1677721600, 10, 10, 10, 3, 0, 32, 128, 1, 1, 256, 1, 1, 0, 0, 0, 0, 1, 0, NULL, 0),
  (12000000, 13000000, 0, 1, NULL, 7, 2, 1677721600, 10, 10, 10, 3, 0, 32, 128, 1, 1, 256, 1, 1, 0, 0, 0, 0, 2, 0, NULL, 0),
  (20000000, 21000000, 0, 1, NULL, 7, 3, 1677721600, 10, 10, 10, 3, 0, 32, 128, 1, 1, 256, 1, 1, 0, 0, 0, 0, 3, 0, NULL, 0);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES
  (900000, 950000, 0, 1677721700, 1, 1, 0, NULL),
  (11900000, 11950000, 0, 1677721700, 2, 1, 0, NULL),
  (19900000, 19950000, 0, 1677721700, 3, 1, 0, NULL);

-- eventClass 27 (OS runtime). On the launching thread 100:
--   pthread_cond_timedwait 3-11 ms: the GPU idles 8 ms of it (lock wait)
--   futex 4-5 ms nested in it (nestingLevel 1): part of its caller, not counted again
--   poll 12.2-12.8 ms: under the second kernel, the GPU is busy: 0
--   poll 14-16 ms: 2 ms of GPU idle (I/O)
--   nanosleep 0.5-1.5 ms: before the span (out of the basis) or under the first kernel: 0
--   sem_wait 21.5-22 ms: after the span: 0
--   ioctl 16-17 ms: not a wait
-- On thread 101, which launches nothing: pthread_mutex_lock 13-19 ms, left out.
INSERT INTO OSRT_API VALUES
  (3000000, 11000000, 27, 1677721700, 20, 0, 0, 0, 0),
  (4000000, 5000000, 27, 1677721700, 23, 0, 1, 0, 0),
  (12200000, 12800000, 27, 1677721700, 21, 1, 0, 0, 0),
  (14000000, 16000000, 27, 1677721700, 21, 1, 0, 0, 0),
  (500000, 1500000, 27, 1677721700, 22, 0, 0, 0, 0),
  (21500000, 22000000, 27, 1677721700, 24, 0, 0, 0, 0),
  (16000000, 17000000, 27, 1677721700, 25, 0, 0, 0, 0),
  (13000000, 19000000, 27, 1677721701, 26, 0, 0, 0, 0);
