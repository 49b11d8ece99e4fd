-- Abuse-limit counters are not money (decision 0042): their table writes no WAL, so a consume
-- commits without waiting for a WAL flush while it holds its account's counter row. After a
-- database crash the counters start from zero, as a Redis limiter's would.
ALTER TABLE "rate_limits" SET UNLOGGED;
