/* rec-static: a statically linked program, which `profil record` must
 * refuse with one clear line (it cannot load the agent). */
int main(void)
{
	return 0;
}
