// Stable ids are unique, so every loader can MERGE on them.
CREATE CONSTRAINT pathway_id IF NOT EXISTS FOR (n:Pathway) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT reaction_id IF NOT EXISTS FOR (n:Reaction) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT gene_id IF NOT EXISTS FOR (n:Gene) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT compound_id IF NOT EXISTS FOR (n:Compound) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT paper_id IF NOT EXISTS FOR (n:Paper) REQUIRE n.id IS UNIQUE;
// Species and Compartment are merged by name, so both sources point at one node per name.
CREATE CONSTRAINT species_name IF NOT EXISTS FOR (n:Species) REQUIRE n.name IS UNIQUE;
CREATE CONSTRAINT compartment_name IF NOT EXISTS FOR (n:Compartment) REQUIRE n.name IS UNIQUE;
CREATE CONSTRAINT flux_migration_version IF NOT EXISTS FOR (n:FluxMigration) REQUIRE n.version IS UNIQUE;
