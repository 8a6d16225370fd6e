-- hash_mem: the hash_mem_multiplier setting (PostgreSQL 15: a hash table
-- may use work_mem times it; 2 by default), its range and its pg_settings
-- row.
-- @@ read-only
SHOW hash_mem_multiplier;
SELECT name, setting, vartype, boot_val FROM pg_settings WHERE name = 'hash_mem_multiplier';
SET hash_mem_multiplier = 1.5;
SHOW hash_mem_multiplier;
SET hash_mem_multiplier = 0.5;
SET hash_mem_multiplier = 1001;
SET hash_mem_multiplier = 'lots';
RESET hash_mem_multiplier;
SHOW hash_mem_multiplier;
