package sqlite

// paperSchema holds the paper exchange's tables (schema version 3).
const paperSchema = ``
