-- Swaps the names of the two ranges that start together (tieA is then the later row): nsys names
-- the kernel after the lower row whatever its name or end, which this case pins down.
UPDATE NVTX_EVENTS SET text = CASE text WHEN 'tieA' THEN 'tieB' ELSE 'tieA' END WHERE text IN ('tieA', 'tieB');
