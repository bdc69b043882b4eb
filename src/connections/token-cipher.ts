/**
 * The cipher moved to the shared floor (src/common/crypto/) so that webhook secrets use it too;
 * connection code keeps importing it from here.
 */
export { type EncryptedToken, keyIdOf, TokenCipher, TokenDecryptionError } from '../common/crypto/token-cipher.js';
