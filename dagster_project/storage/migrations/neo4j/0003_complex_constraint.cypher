// Reactome complexes and sets that reactions consume, produce or are catalysed by, merged on their stable id.
CREATE CONSTRAINT complex_id IF NOT EXISTS FOR (n:Complex) REQUIRE n.id IS UNIQUE;
