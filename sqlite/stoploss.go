package sqlite

// stoplossSchema holds the stop-loss rules and their high-water marks
// (schema version 3).
const stoplossSchema = ``
