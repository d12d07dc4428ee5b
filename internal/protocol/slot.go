package protocol

import "strings"

// Slots is the number of hash slots of a Redis Cluster.
const Slots = 16384

// Slot returns the Redis Cluster hash slot of key: CRC16 (XMODEM) of the
// key's hash tag, modulo 16384. The tag is what lies between the first
// "{" and the first "}" after it, when that is not empty; otherwise the
// whole key is hashed (CLUSTER KEYSLOT gives the same).
func Slot(key string) int {
	return int(crc16(hashPart(key)) % Slots)
}

// hashPart returns the part of key Redis Cluster hashes: its tag, or all of
// it.
func hashPart(key string) string {
	if open := strings.IndexByte(key, '{'); open >= 0 {
		if end := strings.IndexByte(key[open+1:], '}'); end > 0 {
			return key[open+1 : open+1+end]
		}
	}
	return key
}

// crc16 is CRC-16/XMODEM (polynomial 0x1021, initial value 0), the
// checksum Redis Cluster hashes keys with, bit by bit: keys are short, and
// a table would be a package variable.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// tagLen is the length of the tags tagFor makes.
const tagLen = 4

// tagFor returns a hash tag of tagLen bytes from '0' to '?' (no braces)
// in slot, so that "{" + tagFor(Slot(key)) + "}" hashes as key does
// whatever braces key holds. CRC16 of a fixed length is linear over
// GF(2), and the low nibbles of the tagLen bytes (16 bits) reach every
// value of the CRC's low 14 bits, the slot: the nibbles come from solving
// that system by elimination.
func tagFor(slot int) string {
	const mask = Slots - 1
	var zero [tagLen]byte
	for i := range zero {
		zero[i] = '0'
	}
	want := (uint16(slot) ^ crc16(string(zero[:]))) & mask
	var pivot, combo [16]uint16 // pivot[b]: a reduced image whose top bit is b; combo[b]: its nibble bits
	for i := range 4 * tagLen {
		var msg [tagLen]byte
		msg[i/4] = 1 << (i % 4)
		v, m := crc16(string(msg[:]))&mask, uint16(1)<<i
		for b := 15; b >= 0 && v != 0; b-- {
			if v>>b&1 == 0 {
				continue
			}
			if pivot[b] == 0 {
				pivot[b], combo[b] = v, m
				break
			}
			v, m = v^pivot[b], m^combo[b]
		}
	}
	var x uint16
	for b := 15; b >= 0; b-- {
		if want>>b&1 != 0 {
			want, x = want^pivot[b], x^combo[b]
		}
	}
	tag := zero
	for i := range tag {
		tag[i] |= byte(x >> (4 * i) & 0xf)
	}
	return string(tag[:])
}
