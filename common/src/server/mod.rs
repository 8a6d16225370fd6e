//! The postmaster and the per-connection session loop (postgres.c): accept,
//! startup, cancel keys, simple and extended query, COPY. OWNER: P.
