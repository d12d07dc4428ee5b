package cluster

import "github.com/lockzoo/lockzoo/internal/protocol"

// Slots is the number of hash slots of a Redis Cluster.
const Slots = protocol.Slots

// Slot returns the Redis Cluster hash slot of key: CRC16 (XMODEM) of the
// key's hash tag, modulo 16384. The tag is what lies between the first
// "{" and the first "}" after it, when that is not empty; otherwise the
// whole key is hashed (CLUSTER KEYSLOT gives the same).
func Slot(key string) int { return protocol.Slot(key) }
