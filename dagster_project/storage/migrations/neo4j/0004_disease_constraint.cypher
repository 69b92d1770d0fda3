// ClinVar's conditions, merged on their MedGen concept id.
CREATE CONSTRAINT disease_id IF NOT EXISTS FOR (n:Disease) REQUIRE n.id IS UNIQUE;
