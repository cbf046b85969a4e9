package ethrelay

import (
	"github.com/ethereum/go-ethereum/crypto"
)

// VaultEvent is the event the demo vault contract emits.
const VaultEvent = "Deposit(address,bytes32,uint256)"

// VaultSource is the Solidity the vault's bytecode (VaultInitCode) is
// equivalent to. The bytecode is assembled by hand (below) rather than
// compiled, so the tests and the demo need no compiler:
//
//	contract Vault {
//	    event Deposit(address indexed from, bytes32 indexed to, uint256 amount);
//	    // calldata: to (32 bytes: a Cowboy address, left-padded), amount (uint256)
//	    fallback() external payable {
//	        emit Deposit(msg.sender, bytes32(msg.data[0:32]), uint256(bytes32(msg.data[32:64])));
//	    }
//	}
const VaultSource = `contract Vault {
    event Deposit(address indexed from, bytes32 indexed to, uint256 amount);
    fallback() external payable {
        emit Deposit(msg.sender, bytes32(msg.data[0:32]), uint256(bytes32(msg.data[32:64])));
    }
}`

// VaultTopic is keccak256(VaultEvent), the Deposit log's topic 0.
func VaultTopic() [32]byte { return [32]byte(crypto.Keccak256([]byte(VaultEvent))) }

// VaultInitCode is the vault's creation bytecode: a 12-byte constructor
// that returns the 50-byte runtime code following it.
//
//	constructor (12 bytes)
//	60 32     PUSH1 0x32    runtime length
//	60 0c     PUSH1 0x0c    runtime offset in this code
//	60 00     PUSH1 0       memory offset
//	39        CODECOPY
//	60 32     PUSH1 0x32
//	60 00     PUSH1 0
//	f3        RETURN        return memory[0:0x32]
//
//	runtime (50 bytes)
//	60 20     PUSH1 32      size
//	60 20     PUSH1 32      calldata offset
//	60 00     PUSH1 0       memory offset
//	37        CALLDATACOPY  memory[0:32] = calldata[32:64] (amount)
//	60 00     PUSH1 0
//	35        CALLDATALOAD  topic 2 = calldata[0:32] (to)
//	33        CALLER        topic 1 = msg.sender
//	7f <32>   PUSH32        topic 0 = keccak256("Deposit(address,bytes32,uint256)")
//	60 20     PUSH1 32      data size
//	60 00     PUSH1 0       data offset
//	a3        LOG3
//	00        STOP
func VaultInitCode() []byte {
	topic := VaultTopic()
	code := []byte{0x60, 0x32, 0x60, 0x0c, 0x60, 0x00, 0x39, 0x60, 0x32, 0x60, 0x00, 0xf3}
	code = append(code, 0x60, 0x20, 0x60, 0x20, 0x60, 0x00, 0x37, 0x60, 0x00, 0x35, 0x33, 0x7f)
	code = append(code, topic[:]...)
	return append(code, 0x60, 0x20, 0x60, 0x00, 0xa3, 0x00)
}
