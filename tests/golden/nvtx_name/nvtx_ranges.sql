-- NVTX ranges around the calls of launches.sql (T0 = thread 100, T1 = thread 101 of process 100).
-- The latest range timestamp is 3500 (tieA's end): the never-closed range "open" ends there.
-- Expected innermost range per correlation id:
--    1 inner (nested push/pop)            3 outer (se2 ended at 900)       4 none (before every range)
--    5 se1 (start/end ranges overlap without nesting: the latest start wins over inner, outer)
--    6 se2 (inner ends inside the call)   7 outer2 (crossthread ended on T1 and does not count)
--    8 none: the innermost range has no name, so no fallback to outer2
--    9 open (never closed)               10 none (the call ends after the latest range timestamp)
--   11 "in domain" (no domain prefix)    12 "registered range" (textId)
--   13 tieA: two containers start at 3000, the lower row wins (swap_tie_names.sql checks that)
--   14 x/y + kernel z, 15 x + kernel y/z: both "x/y/z"
--   16 exact (same bounds as the call)  17 outer2 (a graph launch: two kernels)  18 outer
--   19 outer2                            50, 77, 99 none (other process, no match, no call)
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,
  category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER,
  domainId INTEGER, uint64Value INTEGER, int64Value INTEGER, doubleValue REAL, uint32Value INTEGER,
  int32Value INTEGER, floatValue REAL, jsonTextId INTEGER, jsonText TEXT, binaryData TEXT);
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, endGlobalTid, textId, domainId) VALUES
  (10, NULL, 75, 'mydomain', 1677721700, NULL, NULL, 5),
  (100, 1000, 59, 'outer', 1677721700, NULL, NULL, NULL),
  (200, 500, 59, 'inner', 1677721700, NULL, NULL, NULL),
  (300, 800, 60, 'se1', 1677721700, NULL, NULL, NULL),
  (400, 900, 60, 'se2', 1677721700, NULL, NULL, NULL),
  (1050, 2000, 59, 'outer2', 1677721700, NULL, NULL, NULL),
  (1100, 1300, 60, 'crossthread', 1677721700, 1677721701, NULL, NULL),
  (1200, 1250, 59, NULL, 1677721700, NULL, NULL, NULL),
  (100, 1000, 59, 't101', 1677721701, NULL, NULL, NULL),
  (1500, NULL, 60, 'open', 1677721701, NULL, NULL, NULL),
  (1605, NULL, 34, 'a mark', 1677721701, NULL, NULL, NULL),
  (1400, 1450, 59, 'in domain', 1677721700, NULL, NULL, 5),
  (1460, 1490, 59, NULL, 1677721700, NULL, 20, NULL),
  (3000, 3500, 59, 'tieA', 1677721701, NULL, NULL, NULL),
  (3000, 3400, 59, 'tieB', 1677721701, NULL, NULL, NULL),
  (1700, 1800, 59, 'x/y', 1677721701, NULL, NULL, NULL),
  (1810, 1890, 59, 'x', 1677721701, NULL, NULL, NULL),
  (2500, 2600, 59, 'exact', 1677721700, NULL, NULL, NULL);
