-- Gene facts answered from the HGNC table: the Ensembl gene id and the chromosome band (`location`, e.g. 17p13.1)
-- that the HGNC complete set carries. Empty where a source file lacks the column.
ALTER TABLE gene_identifiers ADD COLUMN IF NOT EXISTS ensembl_gene_id TEXT NOT NULL DEFAULT '';
ALTER TABLE gene_identifiers ADD COLUMN IF NOT EXISTS location TEXT NOT NULL DEFAULT '';
CREATE INDEX IF NOT EXISTS gene_identifiers_ensembl_idx ON gene_identifiers (ensembl_gene_id);
