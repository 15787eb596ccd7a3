// The type codes of CPython's marshal format (Python/marshal.c), the ones Panelot's
// transport writes and reads: marshal_writer.mjs writes large results for Python,
// marshal_reader.mjs reads what Python's marshal.dumps wrote. One byte each; a code
// with FLAG_REF set also enters the reference table, so a later REF names it.

export const NONE = 0x4e; // N
export const TRUE = 0x54; // T
export const FALSE = 0x46; // F
export const INT = 0x69; // i: 32-bit signed
export const LONG = 0x6c; // l: sign and count of 15-bit digits, least significant first
export const BINARY_FLOAT = 0x67; // g: IEEE 754 double, little-endian
export const SHORT_ASCII = 0x7a; // z: length byte, ASCII
export const SHORT_ASCII_INTERNED = 0x5a; // Z
export const ASCII = 0x61; // a: 32-bit length, ASCII
export const ASCII_INTERNED = 0x41; // A
export const UNICODE = 0x75; // u: 32-bit length, UTF-8 (surrogates passed as they are)
export const INTERNED = 0x74; // t: the same, interned
export const STRING = 0x73; // s: 32-bit length, bytes
export const REF = 0x72; // r: 32-bit index into the reference table
export const LIST = 0x5b; // [: 32-bit count
export const TUPLE = 0x28; // (: 32-bit count
export const SMALL_TUPLE = 0x29; // ): count byte
export const DICT = 0x7b; // {: key, value pairs up to NULL
export const NULL = 0x30; // 0: the end of a dict
export const FLAG_REF = 0x80;
