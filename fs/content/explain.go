package content

// QueryExplainName is the file in q/<query>/ that explains the query term
// by term: how many episodes matched after each term and what it was read
// as.
const QueryExplainName = "explain"
