-- Kernel launches of a small synthetic recording: process 100 (threads 100 and 101, global thread ids
-- 1677721700 and 1677721701) on GPUs 0 and 1, and process 200 (thread 200, 3355443400). Each CUDA
-- API call launches the kernel(s) with its correlation id in its own process. nvtx_ranges.sql adds
-- the NVTX ranges; the comments there say which range each call should be named after.
-- DDL in the shape of the tables `nsys export` writes (only those the kernel reports read).

CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);
INSERT INTO META_DATA_EXPORT VALUES
  ('EXPORT_PRODUCT_NAME', 'tracedoc'), ('EXPORT_PRODUCT_VERSION', '2024.5.1.113'),
  ('EXPORT_SCHEMA_VERSION', '3.13.2'), ('EXPORT_SCHEMA_VERSION_MAJOR', '3'),
  ('EXPORT_SCHEMA_VERSION_MINOR', '13'), ('EXPORT_SCHEMA_VERSION_MICRO', '2');

CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES
  (1, 'cudaLaunchKernel_v7000'),
  (2, 'cudaGraphLaunch_v10000'),   -- a 7-character suffix: nsys keeps it
  (3, 'cudaLaunchKernel'),         -- the same name as id 1 once the suffix is removed
  (10, 'void kernA<int>(int *)'), (11, 'kernA'), (12, '_Z5kernAIiEvPi'),
  (13, 'kernB(float)'), (14, 'kernB'),
  (15, 'y/z'),                     -- "x" / "y/z" and "x/y" / "z" compose the same name
  (16, 'z'),
  (20, 'registered range');        -- an NVTX range text registered with nvtxDomainRegisterString

CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT, totalMemory INTEGER,
  smCount INTEGER, computeMajor INTEGER, computeMinor INTEGER);
INSERT INTO TARGET_INFO_GPU VALUES (0, 0, 'NVIDIA A100-SXM4-80GB', 85899345920, 108, 8, 0),
                                   (0, 1, 'NVIDIA A100-SXM4-80GB', 85899345920, 108, 8, 0);

CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
  globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId, returnValue) VALUES
  (250, 260, 0, 1677721700, 1, 1, 0),
  (950, 960, 0, 1677721700, 3, 1, 0),
  (50, 60, 0, 1677721700, 4, 1, 0),
  (350, 360, 0, 1677721700, 5, 1, 0),
  (480, 520, 0, 1677721700, 6, 1, 0),
  (1150, 1160, 0, 1677721700, 7, 1, 0),
  (1210, 1220, 0, 1677721700, 8, 1, 0),
  (1600, 1610, 0, 1677721701, 9, 1, 0),
  (3450, 3600, 0, 1677721701, 10, 1, 0),
  (1410, 1420, 0, 1677721700, 11, 1, 0),
  (1470, 1480, 0, 1677721700, 12, 1, 0),
  (3100, 3110, 0, 1677721701, 13, 1, 0),
  (1710, 1720, 0, 1677721701, 14, 1, 0),
  (1820, 1830, 0, 1677721701, 15, 1, 0),
  (2500, 2600, 0, 1677721700, 16, 3, 0),
  (1900, 1910, 0, 1677721700, 17, 2, 0),
  (960, 990, 0, 1677721700, 18, 1, 0),
  (1600, 1605, 0, 1677721700, 19, 1, 0),    -- same start as correlation 9, on the other thread
  (250, 260, 0, 3355443400, 50, 1, 0),      -- process 200
  (700, 705, 0, 1677721700, NULL, 1, 0),    -- no correlation id: launches nothing
  (2000, 2005, 0, 1677721700, 77, 1, 0);    -- its kernel runs in process 200: no match

CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,
  globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER,
  launchType INTEGER, cacheConfig INTEGER, registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL,
  gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL,
  blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL,
  localMemoryPerThread INTEGER NOT NULL, localMemoryTotal INTEGER NOT NULL, gridId INTEGER NOT NULL,
  sharedMemoryExecuted INTEGER, graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, globalPid,
    demangledName, shortName, mangledName, registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ,
    staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId) VALUES
  (300, 400, 0, 1, 7, 1, 1677721600, 10, 11, 12, 32, 128, 1, 1, 256, 1, 1, 0, 0, 0, 0, 1),
  (1000, 1090, 0, 1, 7, 3, 1677721600, 10, 11, 12, 32, 128, 1, 1, 256, 1, 1, 0, 0, 0, 0, 2),
  (70, 95, 0, 1, 7, 4, 1677721600, 13, 14, NULL, 16, 1, 1, 1, 32, 1, 1, 0, 0, 0, 0, 3),
  (365, 420, 1, 1, 9, 5, 1677721600, 10, 11, 12, 32, 64, 2, 1, 128, 2, 1, 1024, 0, 0, 0, 4),
  (530, 560, 0, 1, 7, 6, 1677721600, 13, 14, NULL, 16, 1, 1, 1, 32, 1, 1, 0, 0, 0, 0, 5),
  (1170, 1180, 0, 1, 7, 7, 1677721600, 13, 14, NULL, 16, 1, 1, 1, 32, 1, 1, 0, 0, 0, 0, 6),
  (1230, 1240, 0, 1, 7, 8, 1677721600, 13, 14, NULL, 16, 1, 1, 1, 32, 1, 1, 0, 0, 0, 0, 7),
  (1620, 1700, 0, 1, 7, 19, 1677721600, 13, 14, NULL, 16, 1, 1, 1, 32, 1, 1, 0, 0, 0, 0, 8),
  (1615, 1690, 1, 1, 9, 9, 1677721600, 10, 11, 12, 32, 128, 1, 1, 256, 1, 1, 0, 0, 0, 0, 9),
  (3610, 3700, 1, 1, 9, 10, 1677721600, 10, 11, 12, 32, 128, 1, 1, 256, 1, 1, 0, 0, 0, 0, 10),
  (1425, 1430, 0, 1, 7, 11, 1677721600, 13, 14, NULL, 16, 1, 1, 1, 32, 1, 1, 0, 0, 0, 0, 11),
  (1485, 1495, 0, 1, 7, 12, 1677721600, 13, 14, NULL, 16, 1, 1, 1, 32, 1, 1, 0, 0, 0, 0, 12),
  (3120, 3190, 1, 1, 9, 13, 1677721600, 10, 11, 12, 32, 128, 1, 1, 256, 1, 1, 0, 0, 0, 0, 13),
  (1725, 1740, 1, 1, 9, 14, 1677721600, 16, 16, NULL, 8, 4, 1, 1, 64, 1, 1, 0, 0, 0, 0, 14),
  (1840, 1850, 1, 1, 9, 15, 1677721600, 15, 15, NULL, 8, 4, 1, 1, 64, 1, 1, 0, 0, 0, 0, 15),
  (2610, 2700, 0, 1, 7, 16, 1677721600, 10, 11, 12, 32, 128, 1, 1, 256, 1, 1, 0, 0, 0, 0, 16),
  (1920, 1930, 0, 1, 7, 17, 1677721600, 13, 14, NULL, 16, 1, 1, 1, 32, 1, 1, 0, 0, 0, 0, 17),
  (1931, 1945, 0, 1, 7, 17, 1677721600, 13, 14, NULL, 16, 2, 1, 1, 32, 1, 1, 0, 0, 0, 0, 18),
  (980, 1010, 0, 1, 7, 18, 1677721600, 13, 14, NULL, 16, 1, 1, 1, 32, 1, 1, 0, 0, 0, 0, 19),  -- starts before its call ends
  (270, 290, 0, 2, 11, 50, 3355443200, 10, 11, 12, 32, 128, 1, 1, 256, 1, 1, 0, 0, 0, 0, 20),
  (2100, 2150, 0, 2, 11, 77, 3355443200, 13, 14, NULL, 16, 1, 1, 1, 32, 1, 1, 0, 0, 0, 0, 21),
  (3800, 3900, 0, 1, 7, 99, 1677721600, 13, 14, NULL, 16, 1, 1, 1, 32, 1, 1, 0, 0, 0, 0, 22);  -- no call recorded
