// "The k pathways most similar to a text" is one query: db.index.vector.queryNodes('pathway_embedding', k, v).
CREATE VECTOR INDEX pathway_embedding IF NOT EXISTS FOR (p:Pathway) ON p.embedding
OPTIONS {indexConfig: {`vector.dimensions`: {embedding_dim}, `vector.similarity_function`: 'cosine'}};
