// Signs with ethers (an independent Ethereum implementation) for
// sigops' tests: reads {"key", "typed_data", "message"} as JSON on stdin,
// writes {"address", "eip712_hash", "eip712_sig", "sig"}: the EIP-712
// signature of typed_data (eth_signTypedData_v4 form) and the raw secp256k1
// signature of keccak256(message), both r‖s‖v.
import { Wallet, TypedDataEncoder, keccak256, toUtf8Bytes, Signature } from "ethers";
import { readFileSync } from "node:fs";

const input = JSON.parse(readFileSync(0, "utf8"));
const wallet = new Wallet(input.key);
const td = input.typed_data;
const types = { ...td.types };
delete types.EIP712Domain; // ethers derives the domain type itself
const eip712Sig = await wallet.signTypedData(td.domain, types, td.message);
const raw = wallet.signingKey.sign(keccak256(toUtf8Bytes(input.message)));
process.stdout.write(JSON.stringify({
  address: wallet.address,
  eip712_hash: TypedDataEncoder.hash(td.domain, types, td.message),
  eip712_sig: eip712Sig,
  sig: Signature.from(raw).serialized,
}));
