-- Least privilege in serving: the API, `flux ask` and the scorecards' pipeline connect as this role, which can
-- read the tables an answer is built from and write only serving's own (answers, conversations). Where the
-- migrating user may not create roles (a server named by URL), this is skipped with a notice and
-- FLUX_SERVING_DATABASE_URL says which role serving uses.
DO $$
BEGIN
    IF NOT (SELECT rolsuper OR rolcreaterole FROM pg_roles WHERE rolname = current_user) THEN
        RAISE NOTICE 'no CREATEROLE privilege: set FLUX_SERVING_DATABASE_URL to a read-only role';
        RETURN;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{serving_role}') THEN
        CREATE ROLE {serving_role} LOGIN PASSWORD '{serving_password}';
    END IF;
    EXECUTE 'GRANT CONNECT ON DATABASE ' || quote_ident(current_database()) || ' TO {serving_role}';
    GRANT USAGE ON SCHEMA public TO {serving_role};
    GRANT SELECT ON documents, chunks, pathways, pathway_members, gene_identifiers, index_versions,
        pathway_mappings TO {serving_role};
    GRANT SELECT, INSERT, UPDATE, DELETE ON answers, conversations TO {serving_role};
END $$;
