-- pg_stat_ssl and pg_stat_gssapi: a row for the session, neither in use.
SELECT ssl, version, cipher, bits, client_dn, client_serial, issuer_dn
  FROM pg_stat_ssl WHERE pid = pg_backend_pid();
SELECT gss_authenticated, principal, encrypted FROM pg_stat_gssapi WHERE pid = pg_backend_pid();
SELECT count(*) >= 1 FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid);
\d pg_stat_ssl
\d pg_stat_gssapi
-- @@ read-only
SELECT ssl, version, bits FROM pg_stat_ssl WHERE pid = pg_backend_pid();
SELECT gss_authenticated, encrypted FROM pg_stat_gssapi WHERE pid = pg_backend_pid();
