-- OpenMP (OMPT) events of the recording: the initial thread and three workers run three parallel
-- loops (an implicit barrier closes each), one single region with explicit tasks, and a few lock /
-- critical-section waits. One table per event kind, as nsys exports them.

CREATE TABLE OPENMP_EVENT_KIND_THREAD (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER   NOT NULL,                    -- Event end timestamp (ns).
    eventClass                  INTEGER   NOT NULL,                    -- REFERENCES ENUM_NSYS_EVENT_CLASS(id)
    globalTid                   INTEGER,                               -- Serialized GlobalId.
    correlationId               INTEGER,                               -- Currently unused.
    nameId                      INTEGER   NOT NULL,                    -- REFERENCES StringIds(id) -- Event name
    eventKind                   INTEGER,                               -- REFERENCES ENUM_OPENMP_EVENT_KIND(id)
    threadId                    INTEGER,                               -- Internal thread sequence starting from 1.
    threadType                  INTEGER                                -- REFERENCES ENUM_OPENMP_THREAD(id)
);
CREATE TABLE OPENMP_EVENT_KIND_PARALLEL (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER   NOT NULL,                    -- Event end timestamp (ns).
    eventClass                  INTEGER   NOT NULL,                    -- REFERENCES ENUM_NSYS_EVENT_CLASS(id)
    globalTid                   INTEGER,                               -- Serialized GlobalId.
    correlationId               INTEGER,                               -- Currently unused.
    nameId                      INTEGER   NOT NULL,                    -- REFERENCES StringIds(id) -- Event name
    eventKind                   INTEGER,                               -- REFERENCES ENUM_OPENMP_EVENT_KIND(id)
    parallelId                  INTEGER,                               -- Internal parallel region sequence starting from 1.
    parentTaskId                INTEGER                                -- ID for task that creates this parallel region.
);
CREATE TABLE OPENMP_EVENT_KIND_SYNC_REGION_WAIT (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER   NOT NULL,                    -- Event end timestamp (ns).
    eventClass                  INTEGER   NOT NULL,                    -- REFERENCES ENUM_NSYS_EVENT_CLASS(id)
    globalTid                   INTEGER,                               -- Serialized GlobalId.
    correlationId               INTEGER,                               -- Currently unused.
    nameId                      INTEGER   NOT NULL,                    -- REFERENCES StringIds(id) -- Event name
    eventKind                   INTEGER,                               -- REFERENCES ENUM_OPENMP_EVENT_KIND(id)
    parallelId                  INTEGER,                               -- ID of the parallel region that this event belongs to.
    taskId                      INTEGER,                               -- ID of the task that this event belongs to.
    kind                        INTEGER                                -- REFERENCES ENUM_OPENMP_SYNC_REGION(id)
);
CREATE TABLE OPENMP_EVENT_KIND_SYNC_REGION (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER   NOT NULL,                    -- Event end timestamp (ns).
    eventClass                  INTEGER   NOT NULL,                    -- REFERENCES ENUM_NSYS_EVENT_CLASS(id)
    globalTid                   INTEGER,                               -- Serialized GlobalId.
    correlationId               INTEGER,                               -- Currently unused.
    nameId                      INTEGER   NOT NULL,                    -- REFERENCES StringIds(id) -- Event name
    eventKind                   INTEGER,                               -- REFERENCES ENUM_OPENMP_EVENT_KIND(id)
    parallelId                  INTEGER,                               -- ID of the parallel region that this event belongs to.
    taskId                      INTEGER,                               -- ID of the task that this event belongs to.
    kind                        INTEGER                                -- REFERENCES ENUM_OPENMP_SYNC_REGION(id)
);
CREATE TABLE OPENMP_EVENT_KIND_TASK (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER   NOT NULL,                    -- Event end timestamp (ns).
    eventClass                  INTEGER   NOT NULL,                    -- REFERENCES ENUM_NSYS_EVENT_CLASS(id)
    globalTid                   INTEGER,                               -- Serialized GlobalId.
    correlationId               INTEGER,                               -- Currently unused.
    nameId                      INTEGER   NOT NULL,                    -- REFERENCES StringIds(id) -- Event name
    eventKind                   INTEGER,                               -- REFERENCES ENUM_OPENMP_EVENT_KIND(id)
    parallelId                  INTEGER,                               -- ID of the parallel region that this event belongs to.
    taskId                      INTEGER,                               -- ID of the task that this event belongs to.
    kind                        INTEGER                                -- REFERENCES ENUM_OPENMP_TASK_FLAG(id)
);
CREATE TABLE OPENMP_EVENT_KIND_MUTEX_WAIT (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER   NOT NULL,                    -- Event end timestamp (ns).
    eventClass                  INTEGER   NOT NULL,                    -- REFERENCES ENUM_NSYS_EVENT_CLASS(id)
    globalTid                   INTEGER,                               -- Serialized GlobalId.
    correlationId               INTEGER,                               -- Currently unused.
    nameId                      INTEGER   NOT NULL,                    -- REFERENCES StringIds(id) -- Event name
    eventKind                   INTEGER,                               -- REFERENCES ENUM_OPENMP_EVENT_KIND(id)
    kind                        INTEGER,                               -- REFERENCES ENUM_OPENMP_MUTEX(id)
    waitId                      INTEGER,                               -- ID indicating the object being waited.
    taskId                      INTEGER                                -- ID of the task that this event belongs to.
);
CREATE TABLE OPENMP_EVENT_KIND_WORKSHARE (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER   NOT NULL,                    -- Event end timestamp (ns).
    eventClass                  INTEGER   NOT NULL,                    -- REFERENCES ENUM_NSYS_EVENT_CLASS(id)
    globalTid                   INTEGER,                               -- Serialized GlobalId.
    correlationId               INTEGER,                               -- Currently unused.
    nameId                      INTEGER   NOT NULL,                    -- REFERENCES StringIds(id) -- Event name
    eventKind                   INTEGER,                               -- REFERENCES ENUM_OPENMP_EVENT_KIND(id)
    kind                        INTEGER,                               -- REFERENCES ENUM_OPENMP_WORK(id)
    parallelId                  INTEGER,                               -- ID of the parallel region that this event belongs to.
    taskId                      INTEGER,                               -- ID of the task that this event belongs to.
    count                       INTEGER                                -- Measure of the quantity of work involved in the region.
);

-- Threads: the initial thread (tid 24817) for the whole run, three workers from the first
-- parallel region on.
INSERT INTO OPENMP_EVENT_KIND_THREAD VALUES
    (301220411, 2541106733, 78, (24817 << 24) | 24817, NULL, 6, 27, 1, 1),
    (1000412580, 2540998104, 78, (24817 << 24) | 24823, NULL, 7, 27, 2, 2),
    (1000419911, 2540999630, 78, (24817 << 24) | 24824, NULL, 7, 27, 3, 2),
    (1000426304, 2541001287, 78, (24817 << 24) | 24825, NULL, 7, 27, 4, 2);

-- Three parallel regions, forked by the initial thread.
INSERT INTO OPENMP_EVENT_KIND_PARALLEL VALUES
    (1000401223, 1121977806, 78, (24817 << 24) | 24817, NULL, 8, 28, 1, 1),
    (1122301518, 1240118342, 78, (24817 << 24) | 24817, NULL, 8, 28, 2, 1),
    (1240507760, 1389224061, 78, (24817 << 24) | 24817, NULL, 8, 28, 3, 1);

-- Loop work of each thread in each region, and the single region (the initial thread executes it)
-- of the third region.
INSERT INTO OPENMP_EVENT_KIND_WORKSHARE VALUES
    (1000433120, 1118402377, 78, (24817 << 24) | 24817, NULL, 9, 36, 1, 1, 2, 262144),
    (1000440980, 1119987512, 78, (24817 << 24) | 24823, NULL, 9, 36, 1, 1, 3, 262144),
    (1000447301, 1117551190, 78, (24817 << 24) | 24824, NULL, 9, 36, 1, 1, 4, 262144),
    (1000452846, 1121210449, 78, (24817 << 24) | 24825, NULL, 9, 36, 1, 1, 5, 262144),
    (1122310052, 1238876101, 78, (24817 << 24) | 24817, NULL, 9, 36, 1, 2, 6, 262144),
    (1122316790, 1236540988, 78, (24817 << 24) | 24823, NULL, 9, 36, 1, 2, 7, 262144),
    (1122322008, 1239902447, 78, (24817 << 24) | 24824, NULL, 9, 36, 1, 2, 8, 262144),
    (1122329475, 1237118260, 78, (24817 << 24) | 24825, NULL, 9, 36, 1, 2, 9, 262144),
    (1240515318, 1305771094, 78, (24817 << 24) | 24817, NULL, 9, 36, 1, 3, 10, 262144),
    (1240522261, 1306902816, 78, (24817 << 24) | 24823, NULL, 9, 36, 1, 3, 11, 262144),
    (1240530107, 1304330752, 78, (24817 << 24) | 24824, NULL, 9, 36, 1, 3, 12, 262144),
    (1240536832, 1307415933, 78, (24817 << 24) | 24825, NULL, 9, 36, 1, 3, 13, 262144),
    (1307420011, 1388640218, 78, (24817 << 24) | 24817, NULL, 10, 36, 3, 3, 10, 1);

-- Implicit barriers at the end of each loop: the region (SYNC_REGION) and the time spent waiting
-- in it (SYNC_REGION_WAIT) share one name. The explicit barrier ends the single region.
INSERT INTO OPENMP_EVENT_KIND_SYNC_REGION VALUES
    (1118403002, 1121970214, 78, (24817 << 24) | 24817, NULL, 11, 30, 1, 2, 2),
    (1119988140, 1121971590, 78, (24817 << 24) | 24823, NULL, 11, 30, 1, 3, 2),
    (1117551804, 1121972033, 78, (24817 << 24) | 24824, NULL, 11, 30, 1, 4, 2),
    (1121211120, 1121972871, 78, (24817 << 24) | 24825, NULL, 11, 30, 1, 5, 2),
    (1238876733, 1240110518, 78, (24817 << 24) | 24817, NULL, 11, 30, 2, 6, 2),
    (1236541620, 1240111350, 78, (24817 << 24) | 24823, NULL, 11, 30, 2, 7, 2),
    (1239903081, 1240112237, 78, (24817 << 24) | 24824, NULL, 11, 30, 2, 8, 2),
    (1237118894, 1240113006, 78, (24817 << 24) | 24825, NULL, 11, 30, 2, 9, 2),
    (1388640930, 1389216344, 78, (24817 << 24) | 24817, NULL, 12, 30, 3, 10, 3),
    (1306903460, 1389217102, 78, (24817 << 24) | 24823, NULL, 12, 30, 3, 11, 3),
    (1304331380, 1389217930, 78, (24817 << 24) | 24824, NULL, 12, 30, 3, 12, 3),
    (1307416570, 1389218660, 78, (24817 << 24) | 24825, NULL, 12, 30, 3, 13, 3);
INSERT INTO OPENMP_EVENT_KIND_SYNC_REGION_WAIT VALUES
    (1118403617, 1121969580, 78, (24817 << 24) | 24817, NULL, 11, 29, 1, 2, 2),
    (1119988771, 1121970955, 78, (24817 << 24) | 24823, NULL, 11, 29, 1, 3, 2),
    (1117552420, 1121971402, 78, (24817 << 24) | 24824, NULL, 11, 29, 1, 4, 2),
    (1121211748, 1121972240, 78, (24817 << 24) | 24825, NULL, 11, 29, 1, 5, 2),
    (1238877360, 1240109884, 78, (24817 << 24) | 24817, NULL, 11, 29, 2, 6, 2),
    (1236542255, 1240110712, 78, (24817 << 24) | 24823, NULL, 11, 29, 2, 7, 2),
    (1239903702, 1240111603, 78, (24817 << 24) | 24824, NULL, 11, 29, 2, 8, 2),
    (1237119530, 1240112371, 78, (24817 << 24) | 24825, NULL, 11, 29, 2, 9, 2);

-- Implicit tasks of the three regions (one per thread) and the explicit tasks the single region
-- created, run by the workers while they wait at its barrier.
INSERT INTO OPENMP_EVENT_KIND_TASK VALUES
    (1000429870, 1121975122, 78, (24817 << 24) | 24817, NULL, 13, 31, 1, 2, 2),
    (1000437514, 1121975806, 78, (24817 << 24) | 24823, NULL, 13, 31, 1, 3, 2),
    (1000444102, 1121976310, 78, (24817 << 24) | 24824, NULL, 13, 31, 1, 4, 2),
    (1000449733, 1121976902, 78, (24817 << 24) | 24825, NULL, 13, 31, 1, 5, 2),
    (1122306640, 1240115227, 78, (24817 << 24) | 24817, NULL, 13, 31, 2, 6, 2),
    (1122313422, 1240115930, 78, (24817 << 24) | 24823, NULL, 13, 31, 2, 7, 2),
    (1122319087, 1240116472, 78, (24817 << 24) | 24824, NULL, 13, 31, 2, 8, 2),
    (1122326150, 1240117105, 78, (24817 << 24) | 24825, NULL, 13, 31, 2, 9, 2),
    (1240511902, 1389220980, 78, (24817 << 24) | 24817, NULL, 13, 31, 3, 10, 2),
    (1240518840, 1389221615, 78, (24817 << 24) | 24823, NULL, 13, 31, 3, 11, 2),
    (1240526544, 1389222230, 78, (24817 << 24) | 24824, NULL, 13, 31, 3, 12, 2),
    (1240533517, 1389222902, 78, (24817 << 24) | 24825, NULL, 13, 31, 3, 13, 2),
    (1307512840, 1332744917, 78, (24817 << 24) | 24823, NULL, 14, 31, 3, 14, 4),
    (1304402217, 1331010668, 78, (24817 << 24) | 24824, NULL, 14, 31, 3, 15, 4),
    (1307488105, 1333562077, 78, (24817 << 24) | 24825, NULL, 14, 31, 3, 16, 4),
    (1332751004, 1358090481, 78, (24817 << 24) | 24823, NULL, 14, 31, 3, 17, 4),
    (1331016930, 1356215472, 78, (24817 << 24) | 24824, NULL, 14, 31, 3, 18, 4),
    (1333568650, 1359002393, 78, (24817 << 24) | 24825, NULL, 14, 31, 3, 19, 4);

-- Waits for an omp_lock_t (kind 1 lock) and a critical section (kind 4): equal total waiting
-- time, so their order is the report's tie order.
INSERT INTO OPENMP_EVENT_KIND_MUTEX_WAIT VALUES
    (1118405120, 1118406620, 78, (24817 << 24) | 24823, NULL, 15, 34, 1, 140731842101824, 3),
    (1238880214, 1238882714, 78, (24817 << 24) | 24824, NULL, 15, 34, 1, 140731842101824, 8),
    (1358091007, 1358095007, 78, (24817 << 24) | 24823, NULL, 16, 34, 4, 94371207262208, 17);
